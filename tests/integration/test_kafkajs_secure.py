"""kafkajs (2.2.4) through SSL and SASL_SSL listeners laid out as kafkajs's own docker-compose file lays
out its brokers (docker-compose.2_4.yml): per broker a PLAINTEXT, an SSL and a SASL_SSL listener, the
JKS key and trust stores of kafkajs's testHelpers/certs (tests/fixtures/kafkajs), SASL PLAIN users from
its server-jaas.conf, SCRAM-SHA-256/512 user testscram as its createScramCredentials.sh makes it, the ACL
authorizer open where no ACL names a resource, 2 partitions, replication factor 2. The cases are those
of kafkajs's SSL, SASL and ACL specs, with its client settings (tests/clients/js/secure.js)."""

import json
import subprocess

import pytest

from tests import jks_stores
from tests.admin_helpers import unique
from tests.client_programs import JS_DIR, node_command
from tests.harness import Cluster

pytestmark = pytest.mark.timeout(300)

PLAIN_USERS = 'username="test" password="testtest" user_test="testtest" user_bob="bobbob" user_alice="alicealice"'


@pytest.fixture(scope="module")
def kafkajs_cluster(zookeeper, tmp_path_factory):
    overrides = {
        **jks_stores.kafkajs_overrides(),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config":
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {PLAIN_USERS};",
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config":
            'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="adminadmin";',
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config":
            'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="adminadmin";',
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "num.partitions": "2",
        "default.replication.factor": "2",
    }
    cluster = Cluster(zookeeper, tmp_path_factory.mktemp("kafkajs-secure"), 3, overrides,
                      {"SSL": "SSL", "SASL_SSL": "SASL_SSL"})
    cluster.start()
    yield cluster
    cluster.stop()


def scram_user(cluster) -> None:
    """kafkajs's scripts/createScramCredentials.sh: testscram, SCRAM-SHA-256 (8192 iterations) and -512."""
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    upserts = [UserScramCredentialUpsertion("testscram", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),
                                            b"testtestscram=256"),
               UserScramCredentialUpsertion("testscram", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                            b"testtestscram=512")]
    for future in admin.alter_user_scram_credentials(upserts).values():
        future.result(30)


@pytest.fixture(scope="module")
def cases(kafkajs_cluster):
    from confluent_kafka.admin import AdminClient, NewTopic
    scram_user(kafkajs_cluster)
    topic = unique("kafkajs-secure")
    admin = AdminClient({"bootstrap.servers": kafkajs_cluster.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 2)])[topic].result(30)
    config = {"ssl": kafkajs_cluster.listener_bootstrap("SSL").split(","),
              "sasl": kafkajs_cluster.listener_bootstrap("SASL_SSL").split(","),
              "ca": str(jks_stores.KAFKAJS / "cert-signed"), "topic": topic}
    done = subprocess.run([*node_command()[:1], str(JS_DIR / "secure.js"), json.dumps(config)],
                          capture_output=True, text=True, timeout=240)
    results = {r["case"]: r for r in map(json.loads, filter(lambda l: l.startswith("{"), done.stdout.splitlines()))}
    assert done.returncode == 0 and len(results) == 8, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return results


def case(cases, name: str) -> dict:
    result = cases[name]
    if "error" in result:
        raise AssertionError(f"{name} failed in kafkajs:\n{result['error']}")
    return result


@pytest.mark.parametrize("name,value", [("ssl", "over-ssl"), ("sasl-plain", "over-plain"),
                                        ("sasl-scram-sha-256", "over-scram-sha-256"),
                                        ("sasl-scram-sha-512", "over-scram-sha-512")])
def test_records_round_trip(cases, name, value):
    result = case(cases, name)
    assert result["seen"] == value and result["offset"] >= 0


@pytest.mark.parametrize("name,message", [  # kafkajs's testHelpers saslEntries' expectedErr
    ("sasl-plain-wrong", "SASL PLAIN authentication failed"),
    ("sasl-scram-sha-256-wrong", "SASL SCRAM SHA256 authentication failed"),
    ("sasl-scram-sha-512-wrong", "SASL SCRAM SHA512 authentication failed"),
])
def test_wrong_credentials_are_refused(cases, name, message):
    failure = case(cases, name)["failure"]
    assert failure is not None and message in failure


def test_acls_through_sasl(cases):
    result = case(cases, "acls")
    topic = result["described"][0][0][0]
    assert result["described"] == [[[topic, "User:bob", 4, 2]]]  # WRITE (4), DENY (2)
    assert result["denied"] == "TOPIC_AUTHORIZATION_FAILED"
    assert result["deleted"] == [[[topic, "User:bob"]]]
    assert result["written_after_delete"] is True
