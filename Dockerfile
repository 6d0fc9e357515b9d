# The images of the docker-compose cluster, one target each (docker-compose.yml builds them):
#
#   broker     fauxka's broker: Python and its dependencies, no JRE. Configured by KAFKA_*
#              environment variables as cp-kafka is (see README, "docker compose"); the default
#              stage, so `docker build .` builds it.
#   zookeeper  Debian's ZooKeeper 3.8 and a headless JRE
#   report     the broker image plus a JRE, PySpark and the plotting libraries: `fauxka report`
#
# Compose v2 builds with BuildKit, which builds only the stages a target needs.
FROM python:3.11-slim-bookworm AS base
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1


FROM base AS zookeeper
# The man1 directory keeps the JRE's update-alternatives happy on slim images. Debian's package
# ships /var/lib/zookeeper/myid (a link to /etc/zookeeper/conf/myid) holding a placeholder
# sentence, which ZooKeeper refuses as a server id: a standalone server needs no myid at all.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends zookeeper default-jre-headless \
 && rm -rf /var/lib/apt/lists/* /var/lib/zookeeper/myid /etc/zookeeper/conf/myid
COPY config/zoo.cfg /etc/zookeeper/fauxka/zoo.cfg
EXPOSE 2181
HEALTHCHECK --interval=2s --timeout=3s --start-period=30s --retries=3 CMD \
  ["python", "-c", "import socket,sys; s=socket.create_connection(('127.0.0.1',2181),2); s.sendall(b'srvr'); sys.exit(0 if b'Mode:' in s.recv(4096) else 1)"]
CMD ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", \
     "-cp", "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar", \
     "-Dzookeeper.root.logger=INFO,CONSOLE", \
     "org.apache.zookeeper.server.quorum.QuorumPeerMain", "/etc/zookeeper/fauxka/zoo.cfg"]


# The broker's dependencies, from pyproject.toml alone, so editing the source does not reinstall them.
FROM base AS dependencies
WORKDIR /src
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt


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
RUN pip install --no-deps . && rm -rf build *.egg-info
WORKDIR /work
ENTRYPOINT ["fauxka", "report"]
CMD ["--audit", "/var/log/fauxka", "--out", "/report"]


FROM dependencies AS broker
# Every package the project has (.dockerignore keeps out tests, benchmarks and local state).
COPY . /src
RUN pip install --no-deps . \
 && rm -rf /src \
 && mkdir -p /var/lib/kafka/data /var/log/fauxka
WORKDIR /
# cp-kafka's data directory; a KAFKA_LOG_DIRS of the user's replaces it.
ENV KAFKA_LOG_DIRS=/var/lib/kafka/data
VOLUME ["/var/lib/kafka/data"]
# 9092: Kafka protocol; 7070: Prometheus /metrics (KAFKA_METRICS_PORT).
EXPOSE 9092 7070
# Healthy once it answers ApiVersions and its id is registered (broker/protocol/health.py).
HEALTHCHECK --interval=2s --timeout=3s --start-period=60s --retries=3 CMD ["python", "-m", "broker.protocol.health"]
CMD ["fauxka", "broker", "--kafka-env"]
