"""The scenarios `make conformance` runs librdkafka's tests in, each as librdkafka's own CI sets up
Kafka for it with trivup (0.12: clusters/KafkaCluster.py, apps/KafkaBrokerApp.py, apps/SslApp.py)
and hands the clients their settings (tests/LibrdkafkaTestApp.py):

- default: PLAINTEXT, tests/scenarios/default.json;
- ssl: trivup's --ssl: every test's client talks SSL, with a client certificate the brokers require
  (ssl.client.auth=required), the brokers' JKS stores made with keytool;
- sasl_ssl_scram / sasl_ssl_plain: trivup's --ssl --sasl SCRAM-SHA-512 / PLAIN: every client talks
  SASL_SSL as trivup's user testuser/testpass. The suite runs against Kafka's default
  connections.max.reauth.ms (0: sessions never end), as librdkafka's own SASL CI runs it
  (tests/sasl_test.py). 0142_reauthentication skips itself there, so it runs on brokers of its own
  with connections.max.reauth.ms=10000, the value of librdkafka's interactive_broker_version.py
  (Scenario.reauth). Not the whole suite with it: a session of 10 s ends while a test holds a request
  longer on purpose (0093 parks a JoinGroup for 10 s with socket.timeout.ms=3000), and librdkafka
  queues its re-authentication behind the request in flight (max_inflight 1), where it times out on
  the client, whatever the broker;
- sasl_ssl_oauthbearer: trivup's --ssl --sasl OAUTHBEARER without an OIDC server: librdkafka's
  unsecured JWT (enable.sasl.oauthbearer.unsecure.jwt, `scope=requiredScope principal=admin`)
  against Kafka's default unsecured validator requiring that scope, User:admin a super user;
- noautocreate: tests/scenarios/noautocreate.json (auto.create.topics.enable=false), test-runner's
  scenario of that name: the tests librdkafka's test.c gives `.scenario = "noautocreate"`.

Brokers keep a PLAINTEXT listener first (trivup's too): BROKERS and the stand-in kafka-topics.sh and
kafka-acls.sh use it, as Kafka's own tools would without a --command-config. A scenario's secure
listener is on the broker's port + SECURE_PORT_OFFSET.
"""

import time
from dataclasses import dataclass, field

from ssl_material import SslMaterial

SECURE_PORT_OFFSET = 100
SASL_USER, SASL_PASSWORD = "testuser", "testpass"  # trivup's default sasl_users

# The broker settings of librdkafka's default test scenario: tests/scenarios/default.json
# (auto-creation, 4 partitions, replication factor 3) as trivup's KafkaBrokerApp writes them into
# server.properties, with its ACL authorizer open to everyone where no ACL names a resource.
# group.initial.rebalance.delay.ms goes back to Kafka's 3000 (trivup keeps Kafka's default; `fauxka
# up` sets 0). librdkafka's cluster_testing.py gives every broker (Kafka 2.4+) Kafka's rack-aware replica
# selector and its own rack, RACK<id> (`rack`, per broker; 0101 reads from the follower in its rack).
BASE = [
    "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector",
    "num.partitions=4",
    "default.replication.factor=3",
    "offsets.topic.replication.factor=3",
    "delete.topic.enable=true",
    "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
    "allow.everyone.if.no.acl.found=true",
    "group.initial.rebalance.delay.ms=3000",
]


@dataclass(frozen=True)
class Scenario:
    name: str
    test_scenario: str  # test-runner's TEST_SCENARIO
    protocol: str  # the clients' security.protocol, the listener they use
    mechanism: str | None = None  # SASL
    auto_create: bool = True
    only: tuple[str, ...] = ()  # the test numbers of this scenario; empty: every chosen number
    quick: tuple[str, ...] = ()  # --quick (CI): these numbers only; empty: every number it runs
    runner_quick: bool = True  # --quick runs test-runner's quick mode (-Q) here
    broker_extra: tuple[str, ...] = field(default=())
    reauth: tuple[str, ...] = ()  # test numbers run apart, on brokers with connections.max.reauth.ms (REAUTH)

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")


# CI's quick run of a secured scenario: the tests of its own feature, and a producer and a consumer
# group through the secured listener (transactions, 0103, once: in sasl_ssl_scram): about a minute
# each, not the whole suite again
SECURED_QUICK = ("0001", "0012", "0030")

# KIP-368 re-authentication, for the tests that need sessions to end (0142 skips itself without it)
REAUTH = ("connections.max.reauth.ms=10000",)
# the TLS versions the secured scenarios' brokers accept
TLS_VERSIONS = ("ssl.enabled.protocols=TLSv1.2,TLSv1.1,TLSv1",)

SCENARIOS = {s.name: s for s in [
    Scenario("default", "default", "PLAINTEXT"),
    Scenario("ssl", "default", "SSL", quick=SECURED_QUICK,
             broker_extra=TLS_VERSIONS),
    Scenario("sasl_ssl_scram", "default", "SASL_SSL", "SCRAM-SHA-512", quick=("0135", "0142", *SECURED_QUICK, "0103"),
             broker_extra=TLS_VERSIONS, reauth=("0142",)),
    Scenario("sasl_ssl_plain", "default", "SASL_SSL", "PLAIN", quick=("0135", *SECURED_QUICK),
             broker_extra=TLS_VERSIONS, reauth=("0142",)),
    Scenario("sasl_ssl_oauthbearer", "default", "SASL_SSL", "OAUTHBEARER", quick=SECURED_QUICK,
             broker_extra=(*TLS_VERSIONS, "super.users=User:admin"), reauth=("0142",)),
    # test.c: 0045_subscribe_update_topic_remove, 0045_subscribe_update_non_exist_and_partchange,
    # 0107_topic_recreate, 0111_delay_create_topics
    # test-runner's quick mode leaves out both 0045 cases: --quick runs this scenario's four in full (1.6 min)
    Scenario("noautocreate", "noautocreate", "PLAINTEXT", auto_create=False, only=("0045", "0107", "0111"),
             runner_quick=False),
]}


def broker_settings(scenario: Scenario, ssl: SslMaterial | None, reauth: bool = False) -> list[str]:
    """server.properties lines for every broker (the listeners are per broker: `listeners`); with
    `reauth`, for the scenario's tests that need sessions to end."""
    lines = [f"auto.create.topics.enable={'true' if scenario.auto_create else 'false'}", *BASE,
             *scenario.broker_extra, *(REAUTH if reauth else ())]
    if scenario.tls:
        lines += ssl.broker_props
    if scenario.mechanism:
        module = {
            "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule required "
                     f'username="{SASL_USER}" password="{SASL_PASSWORD}" user_{SASL_USER}="{SASL_PASSWORD}";',
            "OAUTHBEARER": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                           'unsecuredLoginLifetimeSeconds="3600" unsecuredLoginStringClaim_sub="admin" '
                           'unsecuredValidatorRequiredScope="requiredScope";',
        }.get(scenario.mechanism, "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                  f'username="{SASL_USER}" password="{SASL_PASSWORD}";')
        lines += [f"sasl.enabled.mechanisms={scenario.mechanism}",
                  f"listener.name.sasl_ssl.{scenario.mechanism.lower()}.sasl.jaas.config={module}"]
    return lines


def rack(broker_id: int) -> str:
    return f"RACK{broker_id}"


def listeners(scenario: Scenario, port: int) -> str:
    own = [f"PLAINTEXT://127.0.0.1:{port}"]
    if scenario.protocol != "PLAINTEXT":
        own.append(f"{scenario.protocol}://127.0.0.1:{port + SECURE_PORT_OFFSET}")
    return ",".join(own)


def client_settings(scenario: Scenario, ssl: SslMaterial | None) -> list[str]:
    """test.conf's security lines, as LibrdkafkaTestApp writes them."""
    lines = [f"security.protocol={scenario.protocol}"]
    if scenario.mechanism == "OAUTHBEARER":  # LibrdkafkaTestApp without an OIDC app
        lines += ["sasl.mechanisms=OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt=true",
                  "sasl.oauthbearer.config=scope=requiredScope principal=admin"]
    elif scenario.mechanism:
        lines += [f"sasl.mechanisms={scenario.mechanism}", f"sasl.username={SASL_USER}",
                  f"sasl.password={SASL_PASSWORD}"]
    if scenario.tls:
        lines += ssl.client_conf
    return lines


def prepare(scenario: Scenario, plaintext: str, secure: list[str], ssl: SslMaterial | None,
            deadline_s: float = 60.0) -> None:
    """What trivup does once the brokers run: the SCRAM user (kafka-configs there; the admin api over
    the PLAINTEXT listener here). Then every broker's secure listener must take the clients' settings
    (SCRAM credentials reach the brokers through ZooKeeper watches) before the first test."""
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    if scenario.mechanism and scenario.mechanism.startswith("SCRAM"):
        admin = AdminClient({"bootstrap.servers": plaintext})
        upsert = UserScramCredentialUpsertion(
            SASL_USER, ScramCredentialInfo(ScramMechanism[scenario.mechanism.replace("-", "_")], 8192),
            SASL_PASSWORD.encode())
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(30)
    if scenario.protocol == "PLAINTEXT":
        return
    settings = dict(line.split("=", 1) for line in client_settings(scenario, ssl))  # librdkafka's own names
    started = time.monotonic()
    for address in secure:
        while True:  # one broker at a time: a client that reached one broker would answer for the rest
            try:
                AdminClient({"bootstrap.servers": address, **settings}).list_topics(timeout=5)
                break
            except Exception as exc:  # KafkaException: not (yet) authenticated
                if time.monotonic() - started > deadline_s:
                    raise RuntimeError(f"{address} refuses the {scenario.name} clients' settings: {exc}") from None
                time.sleep(0.5)
