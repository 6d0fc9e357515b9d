"""Topic name rules and '.'/'_' collisions, as Kafka's `Topic` class and AdminZkClient have them.

Sources: clients/.../common/internals/Topic.java (tags 2.8.0, 3.0.0, 3.3.2, 3.4.0) and
AdminZkClient.validateTopicCreate (3.4.0). A failed check is INVALID_TOPIC_EXCEPTION (17).

Kafka lists colliding topics in the iteration order of a Scala 2.13 immutable Set, so this
module also carries the few lines that reproduce that order (`scala_set_order`); assignment.py
reuses them for its own messages.
"""

from typing import Callable, Hashable, Iterable, Sequence, TypeVar

T = TypeVar("T", bound=Hashable)

GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC})
MAX_NAME_LENGTH = 249
INVALID_TOPIC_EXCEPTION = 17

_LEGAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_M32 = 0xFFFFFFFF


def _java_length(s: str) -> int:
    # Java's String.length() counts UTF-16 code units, so a non-BMP character counts twice.
    return len(s.encode("utf-16-le")) // 2


def validate_topic_name(name: str, kafka_version: tuple[int, ...] = (3, 4, 0)) -> str | None:
    """None if `name` is legal, else the message of Kafka's InvalidTopicException (code 17).

    The wording changed twice: 2.8.x, 3.0.0-3.3.1 (differs from 2.8 only in the capital
    "Topic name:" of the length message), and 3.3.2+ (the default).
    """
    too_long = _java_length(name) > MAX_NAME_LENGTH
    bad_chars = any(c not in _LEGAL for c in name)
    if tuple(kafka_version) >= (3, 3, 2):
        reason = ("the empty string is not allowed" if name == "" else
                  "'.' is not allowed" if name == "." else
                  "'..' is not allowed" if name == ".." else
                  f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
                  if too_long else
                  f"'{name}' contains one or more characters other than "
                  "ASCII alphanumerics, '.', '_' and '-'" if bad_chars else None)
        return None if reason is None else "Topic name is invalid: " + reason
    if name == "":
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if too_long:
        label = "topic name" if tuple(kafka_version) < (3, 0) else "Topic name"
        return (f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                f"{label}: {name}")
    if bad_chars:
        return (f'Topic name "{name}" is illegal, it contains a character other than '
                "ASCII alphanumerics, '.', '_' and '-'")
    return None


def is_internal(name: str) -> bool:
    return name in INTERNAL_TOPICS


def has_collision_chars(name: str) -> bool:
    return "_" in name or "." in name


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")


def has_collision(a: str, b: str) -> bool:
    return unify_collision_chars(a) == unify_collision_chars(b)


def colliding_topics(name: str, existing: Iterable[str]) -> list[str]:
    """Existing topics other than `name` that collide with it, in the order Kafka names them in
    "Topic 'X' collides with existing topics: a, b" (InvalidTopicException, 17).

    Pass `existing` in the order ZooKeeper's getChildren("/brokers/topics") returned it: Kafka
    turns that list into a Scala Set (`children.toSet`) and filters it, so up to 4 topics keep
    that order and more follow the Set's hash order. Kafka only looks when `name` itself has
    a '.' or '_' (without one nothing can collide anyway).
    """
    if not has_collision_chars(name):
        return []
    existing = list(dict.fromkeys(existing))
    hits = [t for t in existing if t != name and has_collision(name, t)]
    # filter() on a HashSet yields a HashSet whose order is that of the survivors alone
    return scala_set_order(hits, java_string_hash, built_from=existing)


# --- Scala 2.13 immutable Set / Map iteration order -------------------------------------------

def java_string_hash(s: str) -> int:
    """java.lang.String.hashCode(), as an unsigned 32-bit value."""
    h = 0
    data = s.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & _M32
    return h


def java_int_hash(i: int) -> int:
    """Integer.hashCode() (the value itself), as an unsigned 32-bit value."""
    return i & _M32


def _improve(h: int) -> int:
    # scala.collection.Hashing.improve, in 32-bit arithmetic.
    h = (h + (~(h << 9))) & _M32
    h ^= h >> 14
    h = (h + (h << 4)) & _M32
    return h ^ (h >> 10)


def _champ(entries: list[tuple[int, T]], shift: int) -> list[T]:
    # A CHAMP node iterates its own elements first (by 5-bit hash fragment), then its sub-nodes.
    if shift >= 32:  # identical full hashes: a collision node keeps insertion order
        return [x for _, x in entries]
    groups: dict[int, list[tuple[int, T]]] = {}
    for h, x in entries:
        groups.setdefault((h >> shift) & 31, []).append((h, x))
    ordered = sorted(groups.items())
    own = [g[0][1] for _, g in ordered if len(g) == 1]
    return own + [x for _, g in ordered if len(g) > 1 for x in _champ(g, shift + 5)]


def scala_set_order(items: Iterable[T], hash32: Callable[[T], int],
                    built_from: Sequence[T] | None = None) -> list[T]:
    """Iteration order of a Scala 2.13 immutable Set/Map holding `items` (in insertion order).

    Up to 4 elements Scala uses Set1..Set4 (insertion order); from 5 on a CHAMP HashSet,
    which stays a HashSet when elements are later removed: pass the original elements as
    `built_from` when `items` is what is left after such a removal.
    """
    items = list(dict.fromkeys(items))
    size = len(set(built_from)) if built_from is not None else len(items)
    if size <= 4:
        return items
    return _champ([(_improve(hash32(x)), x) for x in items], 0)
