"""Kafka's client quota entities (ClientQuotaEntity, DynamicConfig.User/Client/Ip): the entity
types and the keys (with their ConfigDef type) each entity may hold."""

import re

USER, CLIENT_ID, IP = "user", "client-id", "ip"
QUOTA_KEYS = {"producer_byte_rate": "LONG", "consumer_byte_rate": "LONG",
              "request_percentage": "DOUBLE", "controller_mutation_rate": "DOUBLE"}
USER_KEYS = {"SCRAM-SHA-256": "STRING", "SCRAM-SHA-512": "STRING", **QUOTA_KEYS}
IP_KEYS = {"connection_creation_rate": "INT"}
JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?")
