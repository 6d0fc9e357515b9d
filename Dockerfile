# One image for the whole docker-compose cluster: a fauxka broker by default,
# and ZooKeeper (Debian's 3.8 package) when started with the java command
# in docker-compose.yml.
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# ZooKeeper and a headless JRE. The man1 directory keeps the JRE's
# update-alternatives happy on slim images.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends zookeeper default-jre-headless \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Dependencies first, from pyproject.toml alone, so editing the source
# does not reinstall them: the broker's and the report extra's (`fauxka report`).
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; print('\n'.join(p['dependencies'] + p['optional-dependencies']['report']))" \
        > /tmp/requirements.txt \
 && pip install --no-cache-dir -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt

# Then the packages themselves (only these: no .venv, .git or tests).
COPY broker/ broker/
COPY controller/ controller/
COPY model/ model/
COPY zkstore/ zkstore/
COPY fauxka/ fauxka/
COPY pipeline/ pipeline/
RUN pip install --no-cache-dir . \
 && rm -rf build *.egg-info \
 && mkdir -p /etc/fauxka /var/lib/fauxka/data /var/lib/zookeeper

# 9092: Kafka protocol; 7070: Prometheus /metrics; 2181: ZooKeeper.
EXPOSE 9092 7070 2181

CMD ["fauxka", "broker", "--config", "/etc/fauxka/broker.properties"]
