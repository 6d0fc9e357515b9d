"""Where a validate_only CreateTopics spends the controller's time that fauxka cannot cut:
kio encoding the answer, measured in this process on the same machine."""

import statistics
import time
import uuid

from broker.handlers.create_topics import _config_entity
from broker.protocol.build import build
from broker.protocol.codec import encode_response, response_schema
from controller.topic_configs import effective_topic_configs


def answer(version: int):
    """The answer a single-topic validate_only CreateTopics gets with every config at its default."""
    entries = effective_topic_configs({}, {}, {}, {}, include_synonyms=False) if version >= 5 else []
    configs = [_config_entity(version, e.name, e.value, e.read_only, e.source, e.sensitive) for e in entries]
    return build(response_schema(19, version), {"throttle_time": 0, "topics": [{
        "name": "bench-1", "topic_id": uuid.UUID(int=0), "error_code": 0, "error_message": None,
        "topic_config_error_code": 0, "num_partitions": 1, "replication_factor": 1, "configs": configs}]})


def encode_ms(version: int, repeat: int = 7, number: int = 200) -> tuple[float, int]:
    """(median ms to encode the answer with kio, how many config entries it carries)."""
    response = answer(version)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            encode_response(1, response)
        times.append((time.perf_counter() - started) / number * 1000)
    return statistics.median(times), len(response.topics[0].configs) if version >= 5 else 0
