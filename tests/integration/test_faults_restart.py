"""The cluster under faults (issue 5): the whole cluster (ZooKeeper and brokers) goes down
with `fauxka down` and comes back with `fauxka up` on the same data dir."""

from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   ConfigResource, NewTopic, ResourcePatternType, ResourceType,
                                   ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion)

from fauxka.ports import free_ports
from tests.admin_helpers import unique
from tests.integration.test_client_quotas import alter, describe, key
from tests.integration.test_launcher import fauxka


def test_whole_cluster_restart_keeps_everything(tmp_path):
    zk_port, base = free_ports(), free_ports(2)  # brokers listen on base and base + 1
    data_dir = tmp_path / "cluster"
    args = ["--brokers", "2", "--data-dir", str(data_dir), "--zookeeper-port", str(zk_port), "--base-port", str(base),
            "--metrics-base-port", "0", "--detach", "--timeout", "60",
            "--override", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
            "--override", "super.users=User:ANONYMOUS"]
    bootstrap = f"127.0.0.1:{base},127.0.0.1:{base + 1}"
    topic, user = unique("restart"), unique("user")
    up = fauxka("up", *args)
    try:
        assert up.returncode == 0, up.stderr
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 3, 2, config={"retention.ms": "12345"})])[topic].result(15)
        acl = AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
        admin.create_acls([acl])[acl].result(15)
        admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
            user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"secret")])[user].result(15)
        assert alter(f"127.0.0.1:{base}", [([("client-id", "restart-client")], [("producer_byte_rate", 1024)])])[0][1] == 0

        def snapshot():
            admin = AdminClient({"bootstrap.servers": bootstrap})
            metadata = admin.list_topics(timeout=10)
            configs = admin.describe_configs([ConfigResource("TOPIC", topic)])
            config = next(iter(configs.values())).result(10)
            acls = admin.describe_acls(AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                                        AclOperation.ANY, AclPermissionType.ANY)).result(10)
            scram = admin.describe_user_scram_credentials([user])[user].result(10)
            return (metadata.cluster_id, len(metadata.topics[topic].partitions), config["retention.ms"].value,
                    sorted(str(a) for a in acls), [(c.mechanism, c.iterations) for c in scram.scram_credential_infos],
                    describe(f"127.0.0.1:{base}", [("client-id", 0, "restart-client")], True))

        before = snapshot()
        assert before[1:3] == (3, "12345")
        assert before[5] == {key(client_id="restart-client"): {"producer_byte_rate": 1024.0}}
        down = fauxka("down", "--data-dir", str(data_dir))
        assert down.returncode == 0, down.stderr
        up = fauxka("up", *args)
        assert up.returncode == 0, up.stderr
        assert snapshot() == before
    finally:
        fauxka("down", "--data-dir", str(data_dir))
