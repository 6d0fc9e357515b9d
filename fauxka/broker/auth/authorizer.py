"""Authorization seam: handlers ask the Broker's `authorizer.authorize(...)` (through `ctx.authorized`).

Without `authorizer.class.name` every request is allowed, as in Kafka. With it, the ACL authorizer
(fauxka/broker/auth/acl_authorizer.py) or a class named by a Python import path `package.module:Class`.
"""

import importlib
from typing import Any, Protocol

from .acl_authorizer import AclAuthorizer, AuthorizerConfigError

AUTHORIZER_CLASS = "authorizer.class.name"
# Kafka's class names for its ZooKeeper-mode ACL authorizer (SimpleAclAuthorizer: before 2.4).
KAFKA_NAMES = ("kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer")


class Authorizer(Protocol):
    """What the broker asks of any authorizer (AllowAll, AclAuthorizer or a configured class)."""

    async def start(self, timeout_s: float) -> None: ...

    def authorize(self, principal: str, host: str, operation: str, resource_type: str, name: str,
                  **log_options: Any) -> bool: ...

    def close(self) -> None: ...


class AllowAll:
    async def start(self, timeout_s: float) -> None:
        pass

    def authorize(self, principal: str, host: str, operation: str, resource_type: str, name: str,
                  **log_options: Any) -> bool:
        return True

    def close(self) -> None:
        pass


def load_authorizer(config, zk, log: Any) -> Authorizer:
    """The authorizer `authorizer.class.name` names; AuthorizerConfigError when it cannot be made."""
    name = config[AUTHORIZER_CLASS]
    if not name:
        return AllowAll()
    if name in KAFKA_NAMES:
        return AclAuthorizer(config, zk, log)
    module_name, sep, attr = name.partition(":")
    try:
        if not sep:
            raise ImportError("expected a Python import path package.module:Class")
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise AuthorizerConfigError(f"{AUTHORIZER_CLASS}: class {name} cannot be loaded: {exc}") from None
    try:
        return cls(config, zk, log)
    except AuthorizerConfigError:
        raise
    except Exception as exc:
        raise AuthorizerConfigError(f"{AUTHORIZER_CLASS}: {name} cannot be instantiated: {exc!r}") from exc
