"""fauxka/broker/protocol/fast_writer.py writes the bytes kio's own entity writer writes, for every
request, response and header class kio ships, on entities hypothesis draws from their types
(kio registers strategies for its primitive types), tagged fields set and unset included."""

import importlib
import io
import pkgutil

import hypothesis.strategies as st
import kio.schema
from hypothesis import HealthCheck, given, settings
from kio.serial import entity_writer as kio_entity_writer
from kio.static.primitive import Records

from fauxka.broker.protocol.fast_writer import entity_writer


def _message_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(kio.schema.__path__, "kio.schema."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and hasattr(value, "__flexible__") \
                    and (hasattr(value, "__api_key__") or value.__name__.endswith("Header")):
                found.append(value)
    return sorted(found, key=lambda c: c.__module__ + c.__qualname__)


CLASSES = _message_classes()
st.register_type_strategy(Records, st.binary(max_size=64).map(Records))


def _bytes(writer, entity) -> bytes:
    buf = io.BytesIO()
    writer(buf, entity)
    return buf.getvalue()


def test_every_message_class_is_covered():
    assert len(CLASSES) > 500  # requests, responses and headers of every version


@settings(max_examples=250, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CLASSES).flatmap(lambda cls: st.tuples(st.just(cls), st.from_type(cls))))
def test_same_bytes_as_kio(drawn):
    cls, entity = drawn
    assert _bytes(entity_writer(cls), entity) == _bytes(kio_entity_writer(cls), entity), cls
