# The images of the docker-compose cluster, one target each (docker-compose.yml builds them):
#
#   broker     fauxka's broker: Python and its dependencies, no JRE. Configured by KAFKA_*
#              environment variables as cp-kafka is (see README, "docker compose"); also what
#              `docker build .` gives.
#   zookeeper  Debian's ZooKeeper 3.8 and a headless JRE
#   report     the broker image plus a JRE, PySpark and the plotting libraries: `fauxka report`
#
# Compose v2 builds with BuildKit, which builds only the stages a target needs. The classic
# builder (Docker 20.10 without buildx, compose v1) builds every stage above its target: hence
# the order broker, zookeeper, report, so that the broker never waits for the report's Spark.
FROM python:3.11-slim-bookworm AS base
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1


# The broker's dependencies and the build backend, from pyproject.toml alone, so editing the
# source does not reinstall them.
FROM base AS dependencies
WORKDIR /src
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
 && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" \
        >> /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt


FROM dependencies AS broker
# Every package the project has (.dockerignore keeps out tests, benchmarks and local state).
# The build backend was installed with the dependencies: no isolated build environment to fetch.
COPY . /src
RUN pip install --no-deps --no-build-isolation . \
 && rm -rf /src \
 && mkdir -p /var/lib/kafka/data /var/log/fauxka
WORKDIR /
# cp-kafka's data directory; a KAFKA_LOG_DIRS of the user's replaces it.
ENV KAFKA_LOG_DIRS=/var/lib/kafka/data
VOLUME ["/var/lib/kafka/data"]
# 9092: Kafka protocol; 7070: Prometheus /metrics (KAFKA_METRICS_PORT).
EXPOSE 9092 7070
# Healthy once it answers ApiVersions and its id is registered (fauxka/broker/protocol/health.py).
HEALTHCHECK --interval=2s --timeout=3s --start-period=60s --retries=3 CMD ["python", "-m", "fauxka.broker.protocol.health"]
CMD ["fauxka", "broker", "--kafka-env"]


FROM base AS zookeeper
# A headless JRE, and of Debian's ZooKeeper 3.8 only the jars a standalone server loads
# (zookeeper, zookeeper-jute, metrics-core, snappy-java, slf4j, log4j 1.2), unpacked without
# the ~120 Java libraries the package depends on for its admin server, Netty and CLI (420 MB,
# and 40 s of a cold build). The man1 directory keeps the JRE's update-alternatives happy on slim images. No myid
# file: Debian's placeholder one is what made ZooKeeper exit, and a standalone server needs none.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && cd /tmp && apt-get download libzookeeper-java libdropwizard-metrics-java libsnappy-java libslf4j-java liblog4j1.2-java \
 && for deb in *.deb; do dpkg-deb -x "$deb" /tmp/jars; done \
 && mkdir -p /opt/zookeeper /var/lib/zookeeper \
 && cp -L /tmp/jars/usr/share/java/zookeeper.jar /tmp/jars/usr/share/java/zookeeper-jute.jar \
          /tmp/jars/usr/share/java/slf4j-api.jar /tmp/jars/usr/share/java/slf4j-log4j12.jar \
          /tmp/jars/usr/share/java/log4j-1.2.jar /tmp/jars/usr/share/java/metrics-core.jar \
          /tmp/jars/usr/share/java/snappy-java.jar /opt/zookeeper/ \
 && rm -rf /tmp/*.deb /tmp/jars /var/lib/apt/lists/*
COPY config/zoo.cfg /etc/zookeeper/zoo.cfg
COPY config/zookeeper-log4j.properties /etc/zookeeper/log4j.properties
EXPOSE 2181
HEALTHCHECK --interval=2s --timeout=3s --start-period=30s --retries=3 CMD \
  ["python", "-c", "import socket,sys; s=socket.create_connection(('127.0.0.1',2181),2); s.sendall(b'srvr'); sys.exit(0 if b'Mode:' in s.recv(4096) else 1)"]
CMD ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", \
     "-cp", "/etc/zookeeper:/opt/zookeeper/*", \
     "org.apache.zookeeper.server.quorum.QuorumPeerMain", "/etc/zookeeper/zoo.cfg"]


FROM dependencies AS report-dependencies
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends default-jre-headless \
 && rm -rf /var/lib/apt/lists/* \
 && python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['report']))" \
        > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt


FROM report-dependencies AS report
COPY . /src
RUN pip install --no-deps --no-build-isolation . && rm -rf build *.egg-info
WORKDIR /work
ENTRYPOINT ["fauxka", "report"]
CMD ["--audit", "/var/log/fauxka", "--out", "/report"]


# `docker build .` builds the broker (BuildKit builds only its stages; the classic builder builds
# every stage above, so there name a target: docker build --target broker .).
FROM broker AS default
