"""IsrManager's AlterPartition in flight (fauxka/broker/replication/isr.py): the change stays
pending, holding the high watermark for a replica an expansion adds, until the controller answers;
an attempt with no answer (it may have been written) is sent again. Pure logic: a stand-in channel."""

import asyncio
from types import SimpleNamespace

from fauxka.broker.controller_channel import IsrResult
from fauxka.broker.replication.isr import IsrManager
from fauxka.model.errors import ErrorCode, KafkaError

from .test_replication_partition import leader


class Channel:
    def __init__(self, answers):
        self.answers = list(answers)  # an exception (no answer) or an IsrResult, per attempt
        self.sent: list[list[int]] = []

    async def alter_partition(self, topic, topic_id, partition, leader_epoch, new_isr, partition_epoch):
        self.sent.append(list(new_isr))
        await asyncio.sleep(0)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def manager(channel, tasks):
    hosted = SimpleNamespace(partitions={}, high_watermark_moved=lambda p: None)
    metrics = SimpleNamespace(isr_changed=lambda kind: None)
    log = SimpleNamespace(warning=lambda *a, **k: None, info=lambda *a, **k: None)
    return IsrManager(hosted, channel, SimpleNamespace(all_topics={}), metrics, 10000,
                      lambda coro, name: tasks.append(asyncio.get_running_loop().create_task(coro)), log)


def joining_leader():
    p = leader(isr=(1, 2))
    p.update_follower(2, 10, 1500.0)
    p.update_follower(3, 10, 1500.0)
    p.maybe_advance_high_watermark()
    return p


def test_an_expansion_without_an_answer_stays_pending_and_is_sent_again(monkeypatch):
    import fauxka.broker.replication.isr as isr

    monkeypatch.setattr(isr, "_RETRY_BACKOFF_S", 0.01)

    async def scenario():
        p, tasks = joining_leader(), []
        channel = Channel([KafkaError(ErrorCode.request_timed_out, "no answer from the controller in time"),
                           IsrResult(ErrorCode.none, 1, p.leader_epoch, [1, 2, 3], p.partition_epoch + 1)])
        isrs = manager(channel, tasks)
        isrs.request_change(p, [1, 2, 3], "expand")
        while len(channel.sent) < 2:
            assert p.maximal_isr == [1, 2, 3]  # the lost answer may have been written
            p.log.log_end_offset = 14
            p.update_follower(2, 14, 1600.0)
            assert not p.maybe_advance_high_watermark()
            await asyncio.sleep(0.005)
        await asyncio.gather(*tasks)
        return p, channel
    p, channel = asyncio.run(scenario())
    assert channel.sent == [[1, 2, 3], [1, 2, 3]]
    assert p.isr == [1, 2, 3] and p.pending_isr is None and p.log.high_watermark == 10


def test_a_refused_expansion_lets_the_high_watermark_go_on_without_the_replica():
    async def scenario():
        p, tasks = joining_leader(), []
        isrs = manager(Channel([IsrResult(ErrorCode.invalid_update_version, -1, -1, [], -1)]), tasks)
        isrs.request_change(p, [1, 2, 3], "expand")
        p.log.log_end_offset = 14
        p.update_follower(2, 14, 1600.0)
        assert not p.maybe_advance_high_watermark()
        await asyncio.gather(*tasks)
        return p
    p = asyncio.run(scenario())
    assert p.isr == [1, 2] and p.pending_isr is None and p.log.high_watermark == 14
