"""The names and payloads of Kafka's config entity znodes (/config/users|clients|ips/<name>):
Sanitizer's URL-encoded entity names, ConfigEntityName.Default, ConfigEntityZNode.decode. Read by
the brokers (quotas, SCRAM credentials, delegation tokens' principals), written by the controller."""

import asyncio

from fauxka.model.entity_names import DEFAULT, desanitize, desanitize_entity, sanitize, sanitize_entity
from fauxka.model.errors import ErrorCode, KafkaError

from . import paths as zp

# the entity names (Kafka's Sanitizer, ConfigEntityName.Default) are fauxka/model/entity_names.py's
__all__ = ["DEFAULT", "EntityConfigReader", "decode_config", "desanitize", "desanitize_entity", "sanitize",
           "sanitize_entity"]


def decode_config(data: bytes | None) -> dict[str, str]:
    """ConfigEntityZNode.decode: an empty or unparsable znode holds no config."""
    try:
        return {k: str(v) for k, v in zp.decode_entity_config(data).items()} if data else {}
    except (ValueError, AttributeError, TypeError):
        return {}


class EntityConfigReader:
    """AdminZkClient's fetchEntityConfig / fetchAllEntityConfigs / fetchAllChildEntityConfigs."""

    def __init__(self, zk):
        self.zk = zk

    async def one(self, config_type: str, name: str) -> dict[str, str]:
        if "" in name.split("/"):  # ZooKeeper refuses the path: IllegalArgumentException
            raise KafkaError(ErrorCode.unknown_server_error, None)
        got = await self.zk.get(zp.entity_config_path(config_type, name))
        return decode_config(got[0] if got else None)

    async def all(self, config_type: str) -> dict[str, dict[str, str]]:
        names = await self.zk.get_children(zp.entity_configs_path(config_type)) or []
        configs = await asyncio.gather(*(self.one(config_type, n) for n in names))
        return dict(zip(names, configs))

    async def all_user_clients(self) -> dict[tuple[str, str], dict[str, str]]:
        users = await self.zk.get_children(zp.entity_configs_path("users")) or []
        clients = await asyncio.gather(*(self.zk.get_children(zp.user_clients_path(u)) for u in users))
        pairs = [(u, c) for u, names in zip(users, clients) for c in names or []]
        configs = await asyncio.gather(*(self.one("users", f"{u}/clients/{c}") for u, c in pairs))
        return dict(zip(pairs, configs))
