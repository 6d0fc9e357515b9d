"""Response schemas whose Kafka timestamps may be -1 (delegation token errors): kio reads its
`datetime_i64` fields as datetimes and refuses negative ones, so these responses are described
with plain int64 milliseconds instead (the same bytes on the wire)."""

import dataclasses
import typing

from kio.static.primitive import i64

_CLASS_VARS = ("__type__", "__version__", "__flexible__", "__api_key__", "__header_schema__")


def int64_timestamps(cls: type) -> type:
    """A copy of the kio entity `cls` whose datetime_i64 fields are int64 milliseconds."""
    hints = typing.get_type_hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("kafka_type") == "datetime_i64":
            fields.append((f.name, i64, dataclasses.field(metadata={**f.metadata, "kafka_type": "int64"})))
        else:
            extra = {} if f.default is dataclasses.MISSING else {"default": f.default}
            fields.append((f.name, hints[f.name], dataclasses.field(metadata=f.metadata, **extra)))
    namespace = {name: getattr(cls, name) for name in _CLASS_VARS}
    return dataclasses.make_dataclass(cls.__name__, fields, namespace=namespace, frozen=True, slots=True,
                                      kw_only=True)
