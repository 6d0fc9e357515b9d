"""SASL/OAUTHBEARER with Kafka's default unsecured JWT validator on a SASL_PLAINTEXT listener, against
librdkafka's unsecured JWT (confluent-kafka: enable.sasl.oauthbearer.unsecure.jwt) as librdkafka's own
test runs configure it: the token's principal is the client's principal, a token without the required
scope is refused with Kafka's insufficient_scope answer."""

import pytest

from tests.admin_helpers import unique
from tests.harness import Cluster, wait_for

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


@pytest.fixture(scope="module")
def oauth_cluster(zookeeper, tmp_path_factory):
    overrides = {"sasl.enabled.mechanisms": "OAUTHBEARER",
                 "listener.name.client.oauthbearer.sasl.jaas.config":
                     f'{MODULE} required unsecuredValidatorRequiredScope="requiredScope";'}
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("oauth-cluster"), 1, overrides, {"CLIENT": "SASL_PLAINTEXT"})
    cluster.start()
    yield cluster
    cluster.stop()


def settings(cluster, config: str, errors: list | None = None) -> dict:
    out = {"bootstrap.servers": cluster.listener_bootstrap("CLIENT"), "security.protocol": "SASL_PLAINTEXT",
           "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
           "sasl.oauthbearer.config": config}
    if errors is not None:
        out["error_cb"] = lambda error: errors.append(error.str())
    return out


def test_unsecured_jwt_round_trip_as_its_principal(oauth_cluster):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    config = settings(oauth_cluster, "scope=requiredScope principal=alice")
    topic = unique("oauth")
    admin = AdminClient(config)
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer(config)
    producer.produce(topic, b"over oauthbearer")
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": unique("oauth-group"), "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        message = wait_for(lambda: (m := consumer.poll(0.5)) is not None and m.error() is None and m, 30,
                           what="the record back")
        assert message.value() == b"over oauthbearer"
    finally:
        consumer.close()
    created = wait_for(lambda: [e for e in oauth_cluster.audit_events() if e.get("resource_name") == topic], 10,
                       what="the creation's audit line")
    assert created[0]["principal"] == "User:alice"


def test_a_token_without_the_required_scope_is_refused(oauth_cluster):
    from confluent_kafka.admin import AdminClient
    errors: list[str] = []
    admin = AdminClient(settings(oauth_cluster, "scope=otherScope principal=alice", errors))
    with pytest.raises(Exception):
        admin.list_topics(timeout=5)
    # error_cb runs in poll
    wait_for(lambda: admin.poll(0.5) is not None and errors, 20, what="the authentication error")
    assert any('{"status":"insufficient_scope", "scope":"[requiredScope]"}' in e for e in errors), errors
