"""The names and payloads of Kafka's config entity znodes (/config/users|clients|ips/<name>):
Sanitizer's URL-encoded entity names, ConfigEntityName.Default, ConfigEntityZNode.decode. Read by
the brokers (quotas, SCRAM credentials, delegation tokens' principals), written by the controller."""

import asyncio
import re

from fauxka.model.errors import ErrorCode, KafkaError

from . import paths as zp

DEFAULT = "<default>"  # ConfigEntityName.Default: the znode of a null (default) entity name
_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")


def sanitize(name: str) -> str:
    """Kafka's Sanitizer.sanitize: URL-encoding with '*' as %2A and space as %20."""
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in name.encode("utf-8", "surrogatepass"))


def desanitize(name: str) -> str:
    """URLDecoder.decode; a malformed escape fails the request, as Java's IllegalArgumentException."""
    if re.search(r"%(?![0-9A-Fa-f]{2})", name):
        raise KafkaError(ErrorCode.unknown_server_error, None)
    raw = re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name.replace("+", " ").encode())
    return raw.decode("utf-8", "replace")


def sanitize_entity(name: str | None) -> str:
    return DEFAULT if name is None else sanitize(name)


def desanitize_entity(name: str) -> str | None:
    return None if name == DEFAULT else desanitize(name)


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
