"""Kafka's config resources (ConfigResource.Type) as DescribeConfigs and AlterConfigs name them,
and Integer.parseInt's check of a broker resource's name (its id)."""

import re

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
RESOURCE_TYPES = {TOPIC: "TOPIC", BROKER: "BROKER", BROKER_LOGGER: "BROKER_LOGGER"}
_INT = re.compile(r"[+-]?[0-9]+")


def java_int(text: str) -> bool:
    """Whether Integer.parseInt accepts `text`."""
    return bool(_INT.fullmatch(text)) and -(2 ** 31) <= int(text) < 2 ** 31
