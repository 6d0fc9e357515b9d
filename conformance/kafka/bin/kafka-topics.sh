#!/bin/sh
# librdkafka's tests run Kafka's kafka-topics.sh; this one does what they ask through confluent-kafka.
here=$(dirname "$(readlink -f "$0")")
exec "$here/../../../.venv/bin/python" "$here/../../kafka_cli.py" topics "$@"
