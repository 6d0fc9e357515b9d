"""The broker key catalogue: Kafka's server.properties key names, types and defaults.

`BROKER_CONFIGS` names every key fauxka knows (Kafka's KafkaConfig definitions and fauxka's own);
fauxka/broker/config.py parses a file against it, the controller's DescribeConfigs / AlterConfigs rules
(fauxka/model/broker_configs.py) describe and validate against it. Plain data, no I/O.
"""

from dataclasses import dataclass
from typing import Any, Callable

@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    type: str  # int | bool | string | list | password
    default: Any
    check: Callable[[Any], str | None] | None = None  # returns a complaint, or None
    doc: str = ""
    used: bool = True  # False: a Kafka key fauxka accepts and does not act on (yet)


def at_least(low: int) -> Callable[[int], str | None]:
    return lambda v: None if v >= low else f"Value must be at least {low}"


RACK_AWARE_REPLICA_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def _replica_selector(value: str | None) -> str | None:
    """Kafka loads the class named; the one selector Kafka ships is the one fauxka has."""
    if value in (None, "", RACK_AWARE_REPLICA_SELECTOR):
        return None
    return f"Class {value} cannot be found (fauxka has {RACK_AWARE_REPLICA_SELECTOR} only)"


def _key(name, type_, default, check=None, doc="", used=True) -> ConfigKey:
    return ConfigKey(name, type_, default, check, doc, used)


BROKER_CONFIGS: dict[str, ConfigKey] = {
    k.name: k
    for k in (
        _key("broker.id", "int", -1, None,
             "This broker's id; -1: the one in log.dirs' meta.properties, else one generated in ZooKeeper."),
        _key("broker.id.generation.enable", "bool", True,
             doc="broker.id -1 and no meta.properties: take reserved.broker.max.id + a ZooKeeper sequence number."),
        _key("reserved.broker.max.id", "int", 1000, at_least(0),
             "Largest configurable broker.id; generated ids start above it."),
        _key("broker.rack", "string", None,
             doc="Rack of the broker, used by rack-aware assignment and by replica.selector.class."),
        _key("listeners", "list", ["PLAINTEXT://:9092"], doc="NAME://host:port listeners to bind."),
        _key("advertised.listeners", "list", None, doc="Listeners published in ZooKeeper; default: listeners."),
        _key("listener.security.protocol.map", "list",
             ["PLAINTEXT:PLAINTEXT", "SSL:SSL", "SASL_PLAINTEXT:SASL_PLAINTEXT", "SASL_SSL:SASL_SSL"],
             doc="Listener name to security protocol."),
        _key("inter.broker.listener.name", "string", None,
             doc="Listener brokers use between each other; default: the PLAINTEXT one."),
        _key("sasl.enabled.mechanisms", "list", ["GSSAPI"],
             doc="Mechanisms of SASL listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Kafka's default, GSSAPI, "
                 "stops start-up: fauxka has no Kerberos, so a SASL listener names its mechanisms)."),
        _key("sasl.mechanism.inter.broker.protocol", "string", "GSSAPI",
             doc="Mechanism brokers authenticate with on a SASL inter-broker listener (Kafka's default, GSSAPI, "
                 "is refused as above)."),
        _key("sasl.jaas.config", "password", None, used=False,
             doc="Ignored by brokers, as in Kafka: use listener.name.<listener>.<mechanism>.sasl.jaas.config."),
        _key("sasl.server.max.receive.size", "int", 524288, at_least(1),
             "Largest frame before and during SASL authentication."),
        _key("connection.failed.authentication.delay.ms", "int", 100, at_least(0),
             "Delay before the answer to a failed authentication, after which the connection closes."),
        *(_key(name, type_, default, doc=doc) for name, type_, default, doc in (
            ("ssl.keystore.type", "string", "JKS", "Key store type: PEM, PKCS12 or JKS (read by the JRE's keytool; "
             "as in Java, a JKS file declared PKCS12 and a PKCS12 file declared JKS are read too)."),
            ("ssl.keystore.location", "string", None, "Key store file (PEM: private key and certificate chain)."),
            ("ssl.keystore.password", "password", None, "Password of a PKCS12 or JKS key store (required for JKS)."),
            ("ssl.key.password", "password", None, "Password of the private key (encrypted PEM, PKCS12, JKS; unset: the key store's)."),
            ("ssl.keystore.certificate.chain", "password", None, "Inline PEM certificate chain (type PEM)."),
            ("ssl.keystore.key", "password", None, "Inline PEM private key (type PEM)."),
            ("ssl.truststore.type", "string", "JKS", "Trust store type: PEM, PKCS12 or JKS (as the key store)."),
            ("ssl.truststore.location", "string", None, "Trust store file; unset: the system's CA certificates."),
            ("ssl.truststore.password", "password", None, "Password of a PKCS12 or JKS trust store (JKS: may be "
             "unset, the store is then read unchecked)."),
            ("ssl.truststore.certificates", "password", None, "Inline PEM trusted certificates (type PEM)."),
            ("ssl.client.auth", "string", "none", "Client certificates on SSL listeners: none, requested, "
             "required (SASL_SSL listeners read only the listener-prefixed key, as Kafka since 2.8)."),
            ("ssl.enabled.protocols", "list", ["TLSv1.2", "TLSv1.3"], "TLS versions accepted and used."),
            ("ssl.protocol", "string", "TLSv1.3", "Accepted; the versions are ssl.enabled.protocols'."),
            ("ssl.cipher.suites", "list", [], "Cipher suites (Kafka's IANA names or OpenSSL's); empty: OpenSSL's "
             "defaults. TLS 1.3 suites are always enabled."),
            ("ssl.endpoint.identification.algorithm", "string", "https",
             "https: the broker checks other brokers' host names against their certificates; empty: it does not."),
            ("ssl.principal.mapping.rules", "string", "DEFAULT",
             "Principal of a client certificate's DN: DEFAULT or RULE:pattern/replacement/[LU], comma separated."),
        )),
        _key("fauxka.ssl.handshake.timeout.ms", "int", 10000, at_least(1),
             "fauxka: a TLS handshake not finished by then closes the connection."),
        _key("quota.window.num", "int", 11, at_least(1), "Samples of client quota rates (produce, fetch, request)."),
        _key("quota.window.size.seconds", "int", 1, at_least(1), "Length of one quota sample."),
        _key("controller.quota.window.num", "int", 11, at_least(1),
             "Samples of the controller mutation quota (KIP-599)."),
        _key("controller.quota.window.size.seconds", "int", 1, at_least(1),
             "Length of one controller mutation quota sample."),
        _key("connections.max.reauth.ms", "int", 0, at_least(0),
             "KIP-368: SASL session lifetime; clients re-authenticate on the same connection before it ends, "
             "a request after it closes the connection (0: no re-authentication). Also "
             "listener.name.<listener>.<mechanism>.connections.max.reauth.ms."),
        _key("zookeeper.connect", "string", None, doc="host:port[,host:port][/chroot]; required."),
        _key("zookeeper.session.timeout.ms", "int", 18000, at_least(1), "ZooKeeper session timeout."),
        _key("zookeeper.connection.timeout.ms", "int", None, at_least(1),
             "How long to wait for ZooKeeper at start-up; default: the session timeout."),
        _key("num.partitions", "int", 1, at_least(1), "Default partition count of new topics."),
        _key("default.replication.factor", "int", 1, at_least(1), "Default replication factor of new topics."),
        _key("auto.create.topics.enable", "bool", True,
             doc="Metadata for an unknown topic creates it (num.partitions, default.replication.factor)."),
        _key("delete.topic.enable", "bool", True, doc="Whether DeleteTopics may delete."),
        _key("socket.request.max.bytes", "int", 104857600, at_least(1),
             "Largest request frame; a larger one closes the connection."),
        _key("connections.max.idle.ms", "int", 600000, at_least(-1),
             "A connection with no request for this long is closed (-1: never)."),
        _key("request.timeout.ms", "int", 30000, at_least(0), "Forwarding deadline to the controller."),
        _key("controller.socket.timeout.ms", "int", 30000, at_least(0),
             "The controller's deadline for a broker's answer to LeaderAndIsr, UpdateMetadata, StopReplica."),
        _key("controlled.shutdown.enable", "bool", True, doc="SIGTERM asks the controller to move this broker's leaderships first."),
        _key("controlled.shutdown.max.retries", "int", 3, at_least(1), "Controlled shutdown attempts before an unclean stop."),
        _key("controlled.shutdown.retry.backoff.ms", "int", 5000, at_least(0), "Wait between controlled shutdown attempts."),
        _key("auto.leader.rebalance.enable", "bool", True, doc="The controller moves leaderships back to preferred replicas."),
        _key("leader.imbalance.check.interval.seconds", "int", 300, at_least(1), "How often the controller checks leader imbalance."),
        _key("leader.imbalance.per.broker.percentage", "int", 10, at_least(0), "Imbalance (%) of a broker that triggers a rebalance."),
        _key("unclean.leader.election.enable", "bool", False, doc="Default for topics: an out-of-sync replica may become leader."),
        _key("log.dirs", "list", None, doc="Directories of the partition logs (Kafka's on-disk layout)."),
        _key("fauxka.log.in.memory", "bool", False,
             doc="fauxka: keep partition logs in memory only (fast tests; nothing survives a restart)."),
        _key("replica.fetch.backoff.ms", "int", 1000, at_least(0), "Pause of a follower's fetcher after an error."),
        _key("replica.fetch.max.bytes", "int", 1048576, at_least(0), "Follower fetch: bytes per partition."),
        _key("replica.fetch.response.max.bytes", "int", 10485760, at_least(0), "Follower fetch: bytes per response."),
        _key("replica.fetch.wait.max.ms", "int", 500, at_least(0), "Follower fetch: longest wait for data."),
        _key("replica.fetch.min.bytes", "int", 1, at_least(1), "Follower fetch: bytes to wait for."),
        _key("replica.socket.timeout.ms", "int", 30000, at_least(1), "Follower fetch: network timeout."),
        _key("replica.selector.class", "string", None, _replica_selector,
             "KIP-392: how a partition's leader picks the replica a consumer with client.rack reads from "
             "(RackAwareReplicaSelector: a follower in the consumer's rack); unset: the leader."),
        _key("replica.lag.time.max.ms", "int", 30000, at_least(1),
             "A follower that has not caught up for this long leaves the ISR."),
        _key("log.retention.check.interval.ms", "int", 300000, at_least(1),
             "How often segments past retention.ms / retention.bytes / the log start offset are deleted."),
        _key("log.cleaner.backoff.ms", "int", 15000, at_least(0), "How often compacted topics are cleaned."),
        _key("max.incremental.fetch.session.cache.slots", "int", 1000, at_least(0),
             "Fetch sessions (KIP-227) kept; the least recently used goes when a new one is made."),
        _key("replica.high.watermark.checkpoint.interval.ms", "int", 5000, at_least(1),
             "How often high watermarks are written to replication-offset-checkpoint."),
        _key("log.dir", "string", "/tmp/kafka-logs", doc="Used when log.dirs is not set."),
        # The group coordinator (Kafka's GroupConfig and OffsetConfig; defaults as Kafka 3.9).
        # The transaction coordinator (Kafka's TransactionConfig; defaults as Kafka 3.9).
        _key("transaction.state.log.num.partitions", "int", 50, at_least(1), "Partitions of __transaction_state."),
        _key("transaction.state.log.replication.factor", "int", 3, at_least(1),
             "Replication factor of __transaction_state (capped by the live brokers when it is created)."),
        _key("transaction.state.log.min.isr", "int", 2, at_least(1), "min.insync.replicas of __transaction_state."),
        _key("transaction.state.log.segment.bytes", "int", 104857600, at_least(1),
             "segment.bytes of __transaction_state."),
        _key("transaction.max.timeout.ms", "int", 900000, at_least(1),
             "Largest transaction.timeout.ms a producer may ask (INVALID_TRANSACTION_TIMEOUT above it)."),
        _key("transaction.abort.timed.out.transaction.cleanup.interval.ms", "int", 10000, at_least(1),
             "How often transactions past their timeout are aborted."),
        _key("transactional.id.expiration.ms", "int", 604800000, at_least(1),
             "An id idle this long (Empty, CompleteCommit, CompleteAbort) is removed."),
        _key("transaction.remove.expired.transaction.cleanup.interval.ms", "int", 3600000, at_least(1),
             "How often idle transactional ids are removed."),
        _key("offsets.topic.num.partitions", "int", 50, at_least(1), "Partitions of __consumer_offsets."),
        _key("offsets.topic.replication.factor", "int", 3, at_least(1),
             "Replication factor of __consumer_offsets (capped by the live brokers when it is created)."),
        _key("offsets.topic.segment.bytes", "int", 104857600, at_least(1), "segment.bytes of __consumer_offsets."),
        _key("offsets.commit.timeout.ms", "int", 5000, at_least(1),
             "How long a commit (or a group record) waits for every in-sync replica."),
        _key("offsets.retention.minutes", "int", 10080, at_least(1),
             "Committed offsets of a group that stays empty this long expire."),
        _key("offsets.retention.check.interval.ms", "int", 600000, at_least(1), "How often offsets expire."),
        _key("offset.metadata.max.bytes", "int", 4096, at_least(0), "Largest metadata string of a commit."),
        _key("group.min.session.timeout.ms", "int", 6000, at_least(0), "Smallest session timeout a member may ask."),
        _key("group.max.session.timeout.ms", "int", 1800000, at_least(0), "Largest session timeout a member may ask."),
        _key("group.initial.rebalance.delay.ms", "int", 3000, at_least(0),
             "How long the first rebalance of an empty group waits for more members (`fauxka up` and the tests use 0)."),
        _key("group.max.size", "int", 2147483647, at_least(1), "Most members a group may have."),
        _key("audit.log.file", "string", None, doc="fauxka: the controller's audit trail (JSON lines) goes here instead of the log."),
        _key("audit.topic", "string", None,
             doc="fauxka: the controller also publishes its audit trail to this topic (one record per event, keyed by "
                 "principal), which it creates itself, as Kafka its internal topics, whatever auto.create.topics.enable says."),
        _key("audit.topic.num.partitions", "int", 1, at_least(1),
             doc="fauxka: partitions of audit.topic when the controller creates it (one keeps the trail in order)."),
        _key("audit.topic.replication.factor", "int", 3, at_least(1),
             doc="fauxka: replication factor of audit.topic when the controller creates it (capped by the live brokers)."),
        _key("log.file", "string", None, doc="fauxka: JSON log lines go here instead of stderr."),
        _key("fauxka.test.break", "string", None,
             lambda v: None if set(v.split(",")) <= {"ack_before_replication", "read_committed_sees_aborted"}
             else "Must be ack_before_replication, read_committed_sees_aborted or both, comma-separated",
             "fauxka: a deliberately broken broker, to show `fauxka chaos`'s checker failing when it should: "
             "acks=all answered before the followers have the records, or read_committed shown aborted records. "
             "Never in production."),
        _key("fauxka.trace.file", "string", None,
             doc="fauxka: the request trace (JSON lines) goes here while `fauxka trace on` (ZooKeeper's /fauxka/trace) holds."),
        _key("log.level", "string", "INFO",
             lambda v: None if v.upper() in ("DEBUG", "INFO", "WARNING", "ERROR") else "Must be DEBUG, INFO, WARNING or ERROR",
             "fauxka: log level."),
        _key("create.topic.policy.class.name", "string", None,
             doc="KIP-108 CreateTopicPolicy, as a Python import path `package.module:Class`."),
        _key("alter.config.policy.class.name", "string", None,
             doc="KIP-108 AlterConfigPolicy, as a Python import path `package.module:Class`."),
        _key("topic.actions.policy.class.name", "string", None,
             doc="fauxka: KIP-201 TopicActionsPolicy (replaces the two keys above; setting both is an error)."),
        _key("advertised.controller", "string", "active",
             lambda v: None if v in ("active", "self", "random") else "Must be active, self or random",
             "fauxka: the controller id Metadata and DescribeCluster name: the real one (active), this broker "
             "(self) or a random live broker (random, KRaft-like); self/random make clients exercise forwarding."),
        _key("fauxka.admin.blocking", "string", "local",
             lambda v: None if v in ("local", "cluster") else "Must be local or cluster",
             "fauxka: admin writes complete when the controller's cache shows them (local) or every live broker's (cluster)."),
        _key("authorizer.class.name", "string", None,
             doc="ACL authorizer (Kafka's AclAuthorizer / SimpleAclAuthorizer names, or `module:Class`); unset: allow all."),
        _key("super.users", "string", None, doc="Principals the authorizer always allows, `;`-separated."),
        _key("allow.everyone.if.no.acl.found", "bool", False, doc="Allow access to a resource no ACL names."),
        _key("delegation.token.secret.key", "password", None, doc="Secret of delegation token HMACs; unset: no tokens."),
        _key("delegation.token.master.key", "password", None, doc="Deprecated alias of delegation.token.secret.key."),
        *(_key(f"delegation.token.{name}.ms", "int", default, at_least(1), doc) for name, default, doc in (
            ("max.lifetime", 604800000, "Longest lifetime of a delegation token; renewals never go beyond it."),
            ("expiry.time", 86400000, "Default renewal period of a delegation token."),
            ("expiry.check.interval", 3600000, "How often the controller removes expired delegation tokens."))),
        _key("metrics.port", "int", 0, at_least(0), "fauxka: Prometheus /metrics port; 0 = off."),
        _key("metrics.host", "string", "127.0.0.1", doc="fauxka: address the /metrics endpoint binds."),
        # Kafka keys commonly found in server.properties that fauxka accepts without acting on them.
        *(
            _key(name, type_, default, used=False, doc="Accepted for compatibility; no effect.")
            for name, type_, default in (
                ("num.network.threads", "int", 3),
                ("num.io.threads", "int", 8),
                ("num.replica.fetchers", "int", 1),
                ("socket.send.buffer.bytes", "int", 102400),
                ("socket.receive.buffer.bytes", "int", 102400),
                ("num.recovery.threads.per.data.dir", "int", 1),
            )
        ),
    )
}

# Key families passed through to plugins (policies read their own settings).
# `listener.name.<listener>.<mechanism>.sasl.jaas.config` (checked by broker.auth.sasl_config) and other
# per-listener overrides.
PASSTHROUGH_PREFIXES = ("fauxka.policy.", "listener.name.")
