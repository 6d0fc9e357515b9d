"""The iteration order of a Scala 2.13 `mutable.HashMap[String, _]`, the order in which Kafka 3.9
(built with Scala 2.13) lists a DescribeConfigs resource's entries: ConfigHelper builds them from
`originals.filter(...) ++ nonInternalValues` (a mutable.HashMap), and a `configurationKeys` filter
builds another one of the kept names.

A mutable.HashMap iterates its table's buckets in index order and, within a bucket, its entries by
ascending improved hash (`h ^ (h >>> 16)` of the key's `hashCode`, as a signed int). The table
starts at 16 buckets and doubles before an insertion once `size + 1 >= int(0.75 * buckets)`, so a
map of n keys ends with the fewest buckets (at least 16) for which `n + 1 <= int(0.75 * buckets)`."""

from collections.abc import Iterable

from .java_hash import java_string_hash

_INITIAL_BUCKETS = 16
_LOAD_FACTOR = 0.75


def _improved(h: int) -> int:
    u = h & 0xFFFFFFFF
    u ^= u >> 16
    return u - (1 << 32) if u >= 1 << 31 else u


def buckets_for(n: int) -> int:
    buckets = _INITIAL_BUCKETS
    while n + 1 > int(buckets * _LOAD_FACTOR):
        buckets *= 2
    return buckets


def scala_hash_map_order(names: Iterable[str], size: int | None = None) -> list[str]:
    """`names` (distinct) in the order a Scala 2.13 mutable.HashMap of `size` entries (by default
    just these) iterates them: a subset keeps its relative order in the whole map's table."""
    names = list(dict.fromkeys(names))
    mask = buckets_for(max(size or 0, len(names))) - 1
    hashed = [(_improved(java_string_hash(n)), n) for n in names]
    return [n for h, n in sorted(hashed, key=lambda hn: (hn[0] & mask, hn[0]))]
