"""Transaction apis under Kafka's ACL authorizer (KafkaApis' checks): TransactionalId DESCRIBE for
FindCoordinator, WRITE for InitProducerId / AddPartitionsToTxn / EndTxn, Topic WRITE per partition
added. Reuses the locked cluster of test_acl_authorization (ANONYMOUS has ClusterAction, so the
markers flow)."""

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.harness import wait_for
from tests.integration.test_acl_authorization import (  # noqa: F401 (fixtures)
    CREATE, DESCRIBE, TOPIC, controller, grant, locked)

TRANSACTIONAL_ID, WRITE = 5, 4
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED = 53, 29


def test_transaction_acls(locked, controller):
    tid, topic = unique("acltid"), unique("aclt")
    grant(controller, TOPIC, topic, CREATE)
    grant(controller, TOPIC, "__transaction_state", CREATE)  # as the groups test does for __consumer_offsets
    [created] = create_topics(controller, [topic_spec(topic, 2, 2)])
    assert created.error_code == 0, created

    def find():
        return send(controller, 10, 3, {"key": tid, "key_type": 1})
    assert find().error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(controller, TRANSACTIONAL_ID, tid, DESCRIBE)
    wait_for(lambda: find().error_code == 0, 30, 0.2, "a transaction coordinator")
    coordinator = f"127.0.0.1:{find().port}"
    init = {"transactional_id": tid, "transaction_timeout": 60000, "producer_id": -1, "producer_epoch": -1}
    assert send(coordinator, 22, 4, init).error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant(controller, TRANSACTIONAL_ID, tid, WRITE)
    answer = wait_for(lambda: (lambda r: r if r.error_code == 0 else None)(send(coordinator, 22, 4, init)), 10, 0.1,
                      "InitProducerId once WRITE is granted")
    add = {"v3_and_below_transactional_id": tid, "v3_and_below_producer_id": answer.producer_id,
           "v3_and_below_producer_epoch": answer.producer_epoch,
           "v3_and_below_topics": [{"name": topic, "partitions": [0, 1]}]}
    [refused] = send(coordinator, 24, 3, add).results_by_topic_v3_and_below
    assert {int(p.partition_error_code) for p in refused.results_by_partition} == {TOPIC_AUTHORIZATION_FAILED}
    grant(controller, TOPIC, topic, WRITE)
    wait_for(lambda: {int(p.partition_error_code) for p in send(coordinator, 24, 3, add)
                      .results_by_topic_v3_and_below[0].results_by_partition} == {0}, 10, 0.1, "partitions added")
    end = {"transactional_id": tid, "producer_id": answer.producer_id, "producer_epoch": answer.producer_epoch,
           "committed": True}
    assert send(coordinator, 26, 3, end).error_code == 0
