#!/bin/sh
# Kafka's kafka-run-class.sh as librdkafka's Java tests use it (tests/java/run-class.sh): runs a
# class with $CLASSPATH and the client jars in $KAFKA_PATH/libs, Kafka's default heap.
exec java ${KAFKA_HEAP_OPTS:--Xmx256M} -cp "${CLASSPATH:+$CLASSPATH:}$KAFKA_PATH/libs/*" "$@"
