#!/bin/sh
# Kafka's kafka-run-class.sh as librdkafka's Java tests use it (tests/java/run-class.sh): runs a
# class with $CLASSPATH and the client jars in $KAFKA_PATH/libs, Kafka's default heap.
# Kafka's JmxTool (0016) reads fauxka's /metrics instead: jmx_tool.py
case "$1" in
  kafka.tools.JmxTool|org.apache.kafka.tools.JmxTool) shift; exec python3 "$(dirname "$0")/jmx_tool.py" "$@" ;;
esac
exec java ${KAFKA_HEAP_OPTS:--Xmx256M} -cp "${CLASSPATH:+$CLASSPATH:}$KAFKA_PATH/libs/*" "$@"
