"""Stand-ins for the two Kafka command-line tools librdkafka's tests run (through KAFKA_PATH/bin):
kafka-topics.sh and kafka-acls.sh, with the options those tests pass, done through confluent-kafka's
admin client as Kafka's TopicCommand and AclCommand do through theirs (same requests, same waits:
each waits for the brokers' answer and exits 1 with the error when there is one)."""

import argparse
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType, AdminClient,
                                   NewPartitions, NewTopic, ResourcePatternType, ResourceType)

TIMEOUT_S = 30.0


def topics(argv: list[str]) -> int:
    p = _parser("kafka-topics.sh", "--create", "--alter", "--delete")
    p.add_argument("--topic", required=True)
    p.add_argument("--partitions", type=int, default=-1)
    p.add_argument("--replication-factor", type=int, default=-1)
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    args = p.parse_args(argv)
    admin = AdminClient({"bootstrap.servers": args.bootstrap_server, "log_level": 4})
    if args.create:
        configs = dict(item.split("=", 1) for item in args.config)
        futures = admin.create_topics([NewTopic(args.topic, args.partitions, args.replication_factor, config=configs)],
                                      request_timeout=TIMEOUT_S)
        done = f"Created topic {args.topic}."
    elif args.alter:
        if args.partitions < 0:
            p.error("--alter here changes --partitions only")
        futures = admin.create_partitions([NewPartitions(args.topic, args.partitions)], request_timeout=TIMEOUT_S)
        done = None
    else:
        futures = admin.delete_topics([args.topic], request_timeout=TIMEOUT_S)
        done = None
    return _wait(futures, done)


def acls(argv: list[str]) -> int:
    p = _parser("kafka-acls.sh", "--add", "--remove")
    p.add_argument("--force", action="store_true", help="remove without asking (this one never asks)")
    p.add_argument("--allow-principal", action="append", default=[])
    p.add_argument("--deny-principal", action="append", default=[])
    p.add_argument("--allow-host", action="append", default=[])
    p.add_argument("--deny-host", action="append", default=[])
    p.add_argument("--operation", action="append", default=[])
    p.add_argument("--topic", action="append", default=[])
    args = p.parse_args(argv)
    # AclCommand: a principal without hosts gets host '*'; each (principal, host, operation, topic).
    entries = [(AclPermissionType.ALLOW, who, host) for who in args.allow_principal for host in args.allow_host or ["*"]]
    entries += [(AclPermissionType.DENY, who, host) for who in args.deny_principal for host in args.deny_host or ["*"]]
    if not entries or not args.topic:
        p.error("give a principal and a --topic")
    operations = [AclOperation[op.upper()] for op in args.operation or ["All"]]
    admin = AdminClient({"bootstrap.servers": args.bootstrap_server, "log_level": 4})
    kind = AclBindingFilter if args.remove else AclBinding
    bindings = [kind(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, who, host, op, permission)
                for topic in args.topic for permission, who, host in entries for op in operations]
    if args.remove:
        return _wait(admin.delete_acls(bindings, request_timeout=TIMEOUT_S), None)
    return _wait(admin.create_acls(bindings, request_timeout=TIMEOUT_S), None)


def _parser(prog: str, *actions: str) -> argparse.ArgumentParser:
    """--bootstrap-server and exactly one of the actions (Kafka's tools refuse none or two)."""
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--bootstrap-server", required=True)
    group = p.add_mutually_exclusive_group(required=True)
    for action in actions:
        group.add_argument(action, action="store_true")
    return p


def _wait(futures: dict, done: str | None) -> int:
    failed = 0
    for key, future in futures.items():
        try:
            future.result(timeout=TIMEOUT_S + 5)
        except (KafkaException, TimeoutError) as exc:
            print(f"Error while executing for {key}: {exc}", file=sys.stderr)
            failed = 1
    if done and not failed:
        print(done)
    return failed


if __name__ == "__main__":
    sys.exit({"topics": topics, "acls": acls}[sys.argv[1]](sys.argv[2:]))
