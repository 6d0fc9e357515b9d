"""Replica assignment for CreateTopics and CreatePartitions, as Kafka's ZK-mode brokers do it.

Sources (3.4.0; unchanged in substance 2.8-3.9, AdminUtils moved to Java in 3.6):
  AdminUtils.assignReplicasToBrokers           -> assign_replicas
  AdminZkClient.validateTopicCreate            -> validate_create_assignment (manual part only)
  ZkAdminManager.createPartitions, then
  AdminZkClient.createNewPartitionsAssignment  -> add_partitions
Error codes are what ApiError.fromThrowable makes of Kafka's exception. Messages that print a
Scala collection follow Scala 2.13 (the Kafka build everybody ships) iteration order.
"""

import functools
import random
from dataclasses import dataclass
from typing import Iterable, Sequence

from fauxka.model.errors import ErrorCode
from fauxka.model.topic_names import java_int_hash, scala_set_order


_M32 = 0xFFFFFFFF
_RNG = random.Random()


@dataclass(frozen=True)
class BrokerMeta:
    id: int
    rack: str | None = None


class AssignmentError(Exception):
    def __init__(self, error_code: int, message: str):
        super().__init__(message)
        self.error_code = error_code
        self.message = message

    @property
    def client_message(self) -> str | None:
        """What goes on the wire: ApiError.fromThrowable drops UNKNOWN_SERVER_ERROR's text."""
        return None if self.error_code == ErrorCode.unknown_server_error else self.message


# --- AdminUtils.assignReplicasToBrokers -------------------------------------------------------

def assign_replicas(brokers: Sequence[BrokerMeta], num_partitions: int, replication_factor: int,
                    fixed_start_index: int = -1, start_partition_id: int = -1,
                    rng: random.Random | None = None) -> dict[int, list[int]]:
    """Kafka's replica placement. Rack-unaware placement walks `brokers` in the order given,
    as Kafka does: CreateTopics hands it the metadata cache's broker order (see
    `metadata_cache_broker_order`), CreatePartitions the brokers sorted by id. Rack-aware
    placement does not depend on the order. With no fixed start index, the start index and
    then the replica shift are drawn from `rng`, as Kafka draws them from its Random."""
    if num_partitions <= 0:
        raise AssignmentError(ErrorCode.invalid_partitions, "Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise AssignmentError(ErrorCode.invalid_replication_factor, "Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise AssignmentError(ErrorCode.invalid_replication_factor, f"Replication factor: {replication_factor} "
                              f"larger than available brokers: {len(brokers)}.")
    if all(b.rack is None for b in brokers):
        ring = [b.id for b in brokers]
        rack_of = None
    elif any(b.rack is None for b in brokers):
        raise AssignmentError(ErrorCode.unknown_server_error,
                              "Not all brokers have rack information for replica rack aware assignment.")
    else:
        rack_of = {b.id: b.rack for b in brokers}
        ring = rack_alternated_broker_list(rack_of)
    n = len(ring)
    rng = rng or _RNG
    start = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    num_racks = len(set(rack_of.values())) if rack_of else 0
    result: dict[int, list[int]] = {}
    for pid in range(max(0, start_partition_id), max(0, start_partition_id) + num_partitions):
        if pid > 0 and pid % n == 0:
            shift += 1  # after each full round, followers move one step further from the leader
        first = (pid + start) % n
        replicas = [ring[first]]
        if rack_of is None:
            replicas += [ring[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)]
        else:
            _add_rack_aware_followers(replicas, ring, rack_of, num_racks, first, shift, replication_factor)
        result[pid] = replicas
    return result


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def _add_rack_aware_followers(replicas: list[int], ring: list[int], rack_of: dict[int, str],
                              num_racks: int, first: int, shift: int, rf: int) -> None:
    racks, chosen, k = {rack_of[replicas[0]]}, {replicas[0]}, 0
    while len(replicas) < rf:
        broker = ring[_replica_index(first, shift * num_racks, k, len(ring))]
        rack = rack_of[broker]
        # Skip a broker whose rack already holds a replica while some rack holds none, and a
        # broker already chosen while some broker is not.
        if ((rack not in racks or len(racks) == num_racks)
                and (broker not in chosen or len(chosen) == len(ring))):
            replicas.append(broker)
            racks.add(rack)
            chosen.add(broker)
        k += 1


def rack_alternated_broker_list(rack_of: dict[int, str]) -> list[int]:
    """Racks sorted by name, each rack's brokers sorted by id, taken one per rack in turn."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in rack_of.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = [sorted(by_rack[r]) for r in sorted(by_rack)]
    result = []
    for depth in range(max(map(len, queues), default=0)):
        result += [q[depth] for q in queues if depth < len(q)]
    return result


def metadata_cache_broker_order(broker_ids: Iterable[int], previous_count: int | None = None) -> list[int]:
    """Order of ZkMetadataCache.getAliveBrokers(), which CreateTopics passes to the assignment:
    a Scala LongMap sized after the previous snapshot's broker count (default: the same count),
    filled in the UpdateMetadata request's order. Broker 0 is kept apart and comes first."""
    return list(_broker_order(tuple(dict.fromkeys(broker_ids)), previous_count))


@functools.lru_cache(maxsize=64)  # asked on every CreateTopics; the broker set rarely changes
def _broker_order(ids: tuple[int, ...], previous_count: int | None) -> tuple[int, ...]:
    hint = len(ids) if previous_count is None else previous_count
    # new LongMap(hint): mask = next power of two above hint-1, minus one, at least 7 (Java's
    # `1 << 32` is 1, so hint 0 gives 7 too).
    mask = 7 if hint < 0 else (((1 << (((hint - 1) & _M32).bit_length() % 32)) - 1) & 0x3FFFFFFF) | 7
    table: list[int | None] = [None] * (mask + 1)

    def slot(key: int, m: int, t: list) -> int:
        k64 = key & 0xFFFFFFFFFFFFFFFF
        h = (k64 ^ (k64 >> 32)) & _M32
        x = ((h ^ (h >> 16)) * 0x85EBCA6B) & _M32
        e, probe = (x ^ (x >> 13)) & m, 0
        while t[e] is not None:
            probe += 1
            e = (e + 2 * (probe + 1) * probe - 3) & m
        return e

    size = 0
    for key in (i for i in ids if i != 0):
        table[slot(key, mask, table)] = key
        size += 1
        if size > 0.5 * mask:  # LongMap.repack(): double, then never more than 8x too big
            new_mask = ((mask << 1) + 1) & 0x3FFFFFFF
            while new_mask > 8 and 8 * size < new_mask:
                new_mask >>= 1
            old, mask, table = table, new_mask, [None] * (new_mask + 1)
            for key2 in old:
                if key2 is not None:
                    table[slot(key2, mask, table)] = key2
    return tuple(([0] if 0 in ids else []) + [k for k in table if k is not None])


# --- CreateTopics: AdminZkClient.validateTopicCreate, manual assignments ----------------------

def _i32(x: int) -> int:
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def scala_hash_map_string(assignment: dict[int, list[int]]) -> str:
    """toString of the scala.collection.mutable.HashMap[Int, ArrayBuffer] ZkAdminManager builds
    from the request: buckets of a 16-slot table that doubles ahead of its 0.75 load."""
    length, threshold = 16, 12
    for size in range(len(assignment)):
        if size + 1 >= threshold:
            length, threshold = length * 2, int(length * 2 * 0.75)
    improved = {k: _i32((k & _M32) ^ ((k & _M32) >> 16)) for k in assignment}
    keys = sorted(assignment, key=lambda k: (improved[k] & (length - 1), improved[k]))
    body = ", ".join(f"{k} -> ArrayBuffer({', '.join(map(str, assignment[k]))})" for k in keys)
    return f"HashMap({body})"


def validate_create_assignment(assignment: dict[int, list[int]]) -> None:
    """The replica-assignment checks of validateTopicCreate, in Kafka's order. Kafka runs them
    after Topic.validate and the exists/collision checks (see topic_names). `assignment` is
    what the request left once a repeated partition index overwrote the earlier one."""
    if len({len(r) for r in assignment.values()}) != 1:
        raise AssignmentError(ErrorCode.invalid_replica_assignment, "All partitions should have the same number of replicas")
    if any(len(set(r)) != len(r) for r in assignment.values()):
        raise AssignmentError(ErrorCode.invalid_replica_assignment,
                              "Duplicate replica assignment found: " + scala_hash_map_string(assignment))
    # Kafka only compares sums (32-bit, wrapping) of the non-negative ids with 0+1+..+(n-1), so
    # e.g. {-1, 0, 3} passes.
    n = len(assignment)
    product = _i32(n * (n - 1))
    expected = -(-product // 2) if product < 0 else product // 2  # Java int division
    if _i32(sum(k for k in assignment if k >= 0)) != expected:
        raise AssignmentError(ErrorCode.invalid_replica_assignment, "partitions should be a consecutive 0-based integer sequence")


# --- CreatePartitions (KIP-195) ---------------------------------------------------------------

def add_partitions(brokers: Sequence[BrokerMeta], existing: dict[int, list[int]], new_total: int,
                   manual: list[list[int]] | None, rng: random.Random | None = None,
                   topic: str = "") -> dict[int, list[int]]:
    """Assignment of the NEW partitions only (ids len(existing)..new_total-1).

    `brokers` are the registered brokers; `manual` is None when the request had no assignments
    (an empty list is a manual assignment of nothing). `rng` is unused: Kafka continues the
    layout from a fixed start index (partition 0's first replica), so nothing is random.
    Checks in Kafka's order: getBrokerMetadatas (before any topic), ZkAdminManager (counts,
    unknown brokers, number of assignments), AdminZkClient (partition 0, per-partition checks).
    """
    brokers = sorted(brokers, key=lambda b: b.id)  # AdminZkClient.getBrokerMetadatas sorts
    with_rack = [b for b in brokers if b.rack is not None]
    if with_rack and len(with_rack) < len(brokers):
        # Thrown before the per-topic try: Kafka fails the WHOLE request, every topic -1.
        raise AssignmentError(ErrorCode.unknown_server_error, "Not all brokers have rack information. Add "
                              "--disable-rack-aware in command line to make replica assignment "
                              "without rack information.")
    old = len(existing)
    if new_total < old:
        raise AssignmentError(ErrorCode.invalid_partitions, f"Topic currently has {old} partitions, "
                              f"which is higher than the requested {new_total}.")
    if new_total == old:
        raise AssignmentError(ErrorCode.invalid_partitions, f"Topic already has {old} partitions.")
    increment = new_total - old
    known = {b.id for b in brokers}
    proposed = None
    if manual is not None:
        listed = [b for replicas in manual for b in replicas]
        unknown = [b for b in dict.fromkeys(listed) if b not in known]
        if unknown:  # a Scala Set: `flatten.toSet -- allBrokerIds`
            unknown = scala_set_order(unknown, java_int_hash, built_from=listed)
            raise AssignmentError(ErrorCode.invalid_replica_assignment, "Unknown broker(s) in replica "
                                  f"assignment: {', '.join(map(str, unknown))}.")
        if len(manual) != increment:
            raise AssignmentError(ErrorCode.invalid_replica_assignment, f"Increasing the number of partitions "
                                  f"by {increment} but {len(manual)} assignments provided.")
        proposed = {old + i: list(replicas) for i, replicas in enumerate(manual)}
    if 0 not in existing:
        raise AssignmentError(ErrorCode.unknown_server_error, f"Unexpected existing replica assignment for topic "
                              f"'{topic}', partition id 0 is missing. Assignment: {existing}")
    rf = len(existing[0])
    if proposed is not None:
        _validate_new_partitions(proposed, rf)
        return proposed
    if rf == 0:  # `head` of an empty list: an exception no handler maps, the request fails
        raise AssignmentError(ErrorCode.unknown_server_error, "head of empty list")
    start = next((i for i, b in enumerate(brokers) if b.id >= existing[0][0]), 0)
    return assign_replicas(brokers, increment, rf, fixed_start_index=start, start_partition_id=old)


def _validate_new_partitions(proposed: dict[int, list[int]], rf: int) -> None:
    # AdminZkClient.validateReplicaAssignment walks an immutable Map (insertion order up to 4
    # entries, hash order beyond). Its "brokers not available" check cannot fire here: unknown
    # brokers were refused above.
    for pid in scala_set_order(proposed, java_int_hash):
        replicas = proposed[pid]
        if not replicas:
            raise AssignmentError(ErrorCode.invalid_replica_assignment,
                                  f"Cannot have replication factor of 0 for partition id {pid}.")
        if len(set(replicas)) != len(replicas):
            raise AssignmentError(ErrorCode.invalid_replica_assignment, "Duplicate brokers not allowed in replica "
                                  f"assignment: {', '.join(map(str, replicas))} for partition id {pid}.")
    bad = sorted((pid, len(r)) for pid, r in proposed.items() if len(r) != rf)
    if bad:
        raise AssignmentError(ErrorCode.invalid_replica_assignment, "Inconsistent replication factor between "
                              f"partitions, partition 0 has {rf} while partitions "
                              f"[{', '.join(str(p) for p, _ in bad)}] have replication factors "
                              f"[{', '.join(str(n) for _, n in bad)}], respectively.")
