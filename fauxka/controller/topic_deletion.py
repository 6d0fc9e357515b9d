"""DeleteTopics on the controller, as Kafka's (AdminZkClient.deleteTopic, TopicDeletionManager): the
marker /admin/delete_topics/<t> first, then the topic's znodes in one multi-op; deletions marked by
another controller or tool are completed by the active one. A mixin of fauxka/controller/admin.py's
AdminController, whose ZooKeeper, fenced writer, cache, purgatory, policy gate, waits and audit it uses."""

import asyncio
import time
from typing import Any

from fauxka.model.errors import ErrorCode, KafkaError
from fauxka.zkstore import MultiFailed, NodeExists, NoNode, NotEmpty, ZkStore, ZkUnavailable
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import ControllerMoved, FencedWriter
from fauxka.zkstore.store import Op

from .audit import AuditLog, Caller
from .broker_parts import CacheWaits, Metadata
from .election import ControllerElection
from .policy import TopicAction
from .policy_gate import PolicyGate
from .topics import TopicOutcome
from .write_waits import WriteWaits

DELETE_ATTEMPTS = 3


class TopicDeletion:
    # the AdminController's parts this side uses
    zk: ZkStore
    cache: Metadata
    writer: FencedWriter
    election: ControllerElection
    purgatory: CacheWaits
    gate: PolicyGate
    waits: WriteWaits
    audit: AuditLog
    log: Any
    _completing: dict[str, asyncio.Future]

    # `active` is the AdminController's

    async def delete_topics(self, names: list[str], timeout_ms: int, caller: Caller) -> dict[str, TopicOutcome]:
        """Mark, then delete, existing topics; `names` are known to the cache. Outcomes by name."""
        started = time.perf_counter()
        outcomes = {name: TopicOutcome(name) for name in names}
        marked = []
        for name in names:
            try:
                self.gate.check_topic(TopicAction.DELETE, name, self.gate.state_of(name), None, caller, False)
                await self._mark_for_deletion(name)
                marked.append(name)
            except KafkaError as exc:
                outcomes[name].error_code, outcomes[name].error_message = exc.code, exc.message
            except ControllerMoved as exc:
                self.election.resign(str(exc))
                outcomes[name].error_code = ErrorCode.not_controller
            except ZkUnavailable:
                outcomes[name].error_code = ErrorCode.request_timed_out
        for name in marked:
            await self._complete_deletion(name)
        deadline = time.monotonic() + timeout_ms / 1000
        done = set()
        if marked and timeout_ms > 0:
            done = await self.purgatory.wait(set(marked), self.gone, timeout_ms / 1000)
        for name in marked:
            if name not in done:
                outcomes[name].error_code = ErrorCode.request_timed_out
        await self.waits.wait_cluster(marked, deadline - time.monotonic(), outcomes)
        latency_ms = (time.perf_counter() - started) * 1000
        for outcome in outcomes.values():
            self.audit.record(caller, resource_type="TOPIC", resource_name=outcome.name, action="DELETE",
                              validate_only=False, error_code=outcome.error_code,
                              error_message=outcome.error_message, latency_ms=latency_ms)
        return outcomes

    async def _mark_for_deletion(self, name: str) -> None:
        try:
            await self.writer.write([Op.create(zp.delete_topic_path(name))])
        except MultiFailed as failed:
            if not isinstance(failed.cause, NodeExists):
                raise KafkaError(ErrorCode.unknown_server_error, None) from None
            # already marked: Kafka counts this as success and waits for the deletion

    async def _complete_deletion(self, name: str) -> None:
        """The controller's half of deletion (Kafka's TopicDeletionManager), as one multi-op.

        Partitions are listed from ZooKeeper, not the cache, and the listing is retried when a
        concurrent CreatePartitions adds one between the listing and the delete (NotEmpty)."""
        under_way = self._completing.get(name)
        if under_way is not None:  # a DeleteTopics and the marker's watch: the one started goes on
            await asyncio.shield(under_way)
            return
        done = self._completing[name] = asyncio.get_running_loop().create_future()
        try:
            await self._delete_znodes(name)
        finally:
            del self._completing[name]
            done.set_result(None)

    async def _delete_znodes(self, name: str) -> None:
        missing = False
        for _ in range(DELETE_ATTEMPTS):
            try:
                children = await self.zk.get_children(zp.partitions_path(name)) or []
                ops = deletion_ops(name, [int(c) for c in children if c.isdigit()])
                if missing:
                    # Some of the topic's znodes are already gone: a retried DeleteTopics (after a
                    # controller failover) marked a topic whose deletion the old controller had
                    # finished, or two deletions of it raced. Delete what is left, the marker
                    # included (Kafka drops markers of topics that no longer exist), instead of
                    # leaving /admin/delete_topics/<name> behind forever.
                    ops = [op for op in ops if await self.zk.exists(op.path) is not None]
                    if not ops:
                        return  # finished meanwhile
                await self.writer.write(ops)
                self.cache.record_deleted_topic(name)
                return
            except MultiFailed as failed:
                if isinstance(failed.cause, NoNode) and not missing:
                    missing = True
                    continue
                if not isinstance(failed.cause, NotEmpty):
                    self.log.warning("topic deletion incomplete", topic=name, error=repr(failed.cause))
                    return
            except ControllerMoved as exc:
                self.election.resign(str(exc))
                return
            except ZkUnavailable as exc:
                self.log.warning("topic deletion interrupted", topic=name, error=str(exc))
                return
        self.log.warning("topic deletion raced with partition changes; left marked", topic=name)

    async def resume_deletions(self) -> None:
        """Deletions marked elsewhere, as Kafka's controller (TopicDeletionHandler): those its
        predecessor marked, once elected, and any marker that appears while it is active (a retried
        DeleteTopics cannot finish them: its topic is no longer listed, UNKNOWN_TOPIC_OR_PARTITION)."""
        for name in sorted(self.cache.deleting - self._completing.keys()):
            if self.active:
                await self._complete_deletion(name)

    def gone(self, topics: set[str]) -> set[str]:
        """Kafka's DelayedDeleteTopics completes once the metadata cache no longer lists them."""
        return {t for t in topics if t not in self.cache.topics}


def deletion_ops(topic: str, partitions: list[int]) -> list[Op]:
    """Everything a topic is made of in ZooKeeper, children first, and its deletion marker."""
    ops = []
    for partition in sorted(partitions):
        ops.append(Op.delete(zp.partition_state_path(topic, partition)))
        ops.append(Op.delete(zp.partition_path(topic, partition)))
    ops += [Op.delete(zp.partitions_path(topic)), Op.delete(zp.topic_path(topic)),
            Op.delete(zp.entity_config_path("topics", topic)), Op.delete(zp.delete_topic_path(topic))]
    return ops
