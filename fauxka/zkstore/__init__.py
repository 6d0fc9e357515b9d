"""ZooKeeper access in Kafka's own layout. The only package that imports kazoo."""

from .errors import BadVersion, NoNode, NodeExists, NotEmpty, ZkError, ZkUnavailable
from .store import MultiFailed, Op, SessionState, Stat, ZkStore

__all__ = [
    "BadVersion", "NoNode", "NodeExists", "NotEmpty", "ZkError", "ZkUnavailable",
    "MultiFailed", "Op", "SessionState", "Stat", "ZkStore",
]
