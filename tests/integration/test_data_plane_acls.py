"""Produce, Fetch, ListOffsets and InitProducerId under the ACL authorizer, for User:ANONYMOUS
(not a super user; allowed Alter, Describe and ClusterAction on the Cluster, which lets the
followers' fetches through): TOPIC_AUTHORIZATION_FAILED and CLUSTER_AUTHORIZATION_FAILED as
Kafka answers them, then the same requests once granted."""

import json

from tests.admin_helpers import create_topics, send, topic_spec, unique
from tests.data_helpers import batch, fetch, list_offset, produce
from tests.harness import wait_for
from tests.integration.test_acl_authorization import (CREATE, DESCRIBE, LITERAL, PREFIXED, READ, TOPIC, grant,
                                                      locked)  # noqa: F401 (the locked cluster fixture)

WRITE = 4
INIT_PRODUCER_ID = {"transactional_id": None, "transaction_timeout": 60000, "producer_id": -1, "producer_epoch": -1}


def test_data_plane_acls(locked):  # noqa: F811
    controller = locked.controller_address()
    grant(controller, TOPIC, "dacl-", CREATE, PREFIXED)
    topic = unique("dacl")
    [created] = create_topics(controller, [topic_spec(topic, 1, 2)])
    assert int(created.error_code) == 0, created
    state = wait_for(lambda: locked.zk_get(f"/brokers/topics/{topic}/partitions/0/state"), 10, what="state znode")
    leader = locked.address_of(json.loads(state)["leader"])  # Metadata would need Describe
    assert int(send(leader, 22, 4, INIT_PRODUCER_ID).error_code) == 31  # CLUSTER_AUTHORIZATION_FAILED
    assert int(produce(leader, topic, 0, batch([b"x"]))[0].error_code) == 29  # TOPIC_AUTHORIZATION_FAILED
    assert int(fetch(leader, topic, 0, 0).responses[0].partitions[0].error_code) == 29
    assert int(list_offset(leader, topic, 0, -1).error_code) == 29
    for operation in (WRITE, READ, DESCRIBE):
        grant(controller, TOPIC, topic, operation, LITERAL)
    wait_for(lambda: int(produce(leader, topic, 0, batch([b"x"]))[0].error_code) == 0, 10, what="WRITE granted")
    assert int(fetch(leader, topic, 0, 0).responses[0].partitions[0].error_code) == 0
    assert list_offset(leader, topic, 0, -1).offset >= 1
    assert int(send(leader, 22, 4, INIT_PRODUCER_ID).error_code) == 0  # Write on a topic is enough (KIP-679)
