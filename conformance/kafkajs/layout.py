"""ZooKeeper and three fauxka brokers laid out as kafkajs's docker-compose.2_4.yml lays out its Kafka
brokers, for kafkajs's own specs (scripts/kafkajs-specs): broker ids 0-2, each with PLAINTEXT, SSL and
SASL_SSL listeners on localhost 9092-9094, 9095-9097, 9098-9100 (the ports kafkajs's testHelpers
name), the JKS stores and SASL users of its testHelpers (tests/fixtures/kafkajs), SCRAM user
testscram as its scripts/createScramCredentials.sh makes it, the ACL authorizer open where no ACL
names a resource, 2 partitions and replication factor 2, auto-creation on. Prints `ready`, then runs
until SIGTERM or SIGINT, which stops the brokers and ZooKeeper."""

import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests import jks_stores  # noqa: E402

PLAIN = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="test" password="testtest" '
         'user_test="testtest" user_bob="bobbob" user_alice="alicealice";')
SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="adminadmin";'


def broker_properties(broker_id: int, work: Path) -> dict[str, str]:
    port = 9092 + 3 * broker_id
    return {
        "broker.id": str(broker_id), "zookeeper.connect": "127.0.0.1:2181",
        "listeners": f"PLAINTEXT://localhost:{port},SSL://localhost:{port + 1},SASL_SSL://localhost:{port + 2}",
        "log.dirs": str(work / f"broker-{broker_id}"), "log.file": str(work / f"broker-{broker_id}.log"),
        "metrics.port": "0", "auto.create.topics.enable": "true", "default.replication.factor": "2",
        "num.partitions": "2", "delete.topic.enable": "true", "group.initial.rebalance.delay.ms": "0",
        **jks_stores.kafkajs_overrides(),
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN,
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": SCRAM,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
        "zookeeper.session.timeout.ms": "6000", "controlled.shutdown.retry.backoff.ms": "300",
    }


def wait_ready(deadline_s: float = 120) -> None:
    from confluent_kafka.admin import AdminClient

    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        try:
            metadata = AdminClient({"bootstrap.servers": "localhost:9092", "log_level": 0}).list_topics(timeout=2)
            if len(metadata.brokers) == 3 and metadata.controller_id >= 0:
                return
        except Exception:  # KafkaException: not up yet
            pass
        time.sleep(0.5)
    raise SystemExit(f"the brokers were not ready within {deadline_s:.0f} s")


def scram_user() -> None:
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    upserts = [UserScramCredentialUpsertion("testscram", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),
                                            b"testtestscram=256"),
               UserScramCredentialUpsertion("testscram", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                            b"testtestscram=512")]
    admin = AdminClient({"bootstrap.servers": "localhost:9092"})  # kept: its futures die with it
    for future in admin.alter_user_scram_credentials(upserts).values():
        future.result(30)


def main() -> None:
    work = Path(sys.argv[1]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    processes = [subprocess.Popen([python, "-m", "fauxka", "zookeeper", "--port", "2181", "--data-dir",
                                   str(work / "zookeeper")], stdout=open(work / "zookeeper.out", "w"),
                                  stderr=subprocess.STDOUT)]
    for broker_id in range(3):
        config = work / f"broker-{broker_id}.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in broker_properties(broker_id, work).items()))
        processes.append(subprocess.Popen([python, "-m", "fauxka", "broker", "--config", str(config),
                                           "--wait-zookeeper", "127.0.0.1:2181"],
                                          stdout=open(work / f"broker-{broker_id}.out", "w"),
                                          stderr=subprocess.STDOUT))

    def stop(*_):
        for process in reversed(processes):  # brokers first, ZooKeeper last
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        wait_ready()
        scram_user()
    except BaseException:
        stop()
        raise
    print("ready", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
