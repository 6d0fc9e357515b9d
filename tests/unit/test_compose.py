"""The docker-compose cluster's files, without an engine: compose resolves them, each broker's
KAFKA_* environment loads as the broker would load it. `make compose-test` runs them for real."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fauxka.broker.config import config_from_dict
from fauxka.kafka_env import from_environment

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
COMPOSE_FILE = ROOT / "docker-compose.yml"
BROKERS = (1, 2, 3)


def test_no_version_key():
    # compose v2 warns about `version:` on every command; the Compose Specification has none
    assert not re.search(r"^version:", COMPOSE_FILE.read_text(), re.MULTILINE)


def test_compose_v1_validates():
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose (v1) not found on PATH")
    result = subprocess.run([binary, "-f", str(COMPOSE_FILE), "config", "-q"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def _compose_v2() -> bool:
    """A docker CLI with the compose v2 plugin (a bare CLI answers "unknown command")."""
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, timeout=60)
    return probe.returncode == 0


def resolved(env: dict[str, str] | None = None) -> dict:
    if not _compose_v2():
        pytest.skip("docker with the compose v2 plugin not found on PATH: ../shared/tools/container-engine.sh start installs it")
    result = subprocess.run(["docker", "compose", "-f", str(COMPOSE_FILE), "config", "--format", "json"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={"PATH": "/usr/local/bin:/usr/bin:/bin", **(env or {})})
    if result.returncode != 0 and "is not a docker command" in result.stderr:
        pytest.skip("the compose v2 plugin is not installed")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("n", BROKERS)
def test_broker_environment_loads_with_two_listeners(n):
    service = resolved()["services"][f"broker-{n}"]
    config = config_from_dict(from_environment(service["environment"]).properties)
    assert config.broker_id == n
    assert config["zookeeper.connect"] == "zookeeper:2181"
    assert [(ep.listener, ep.host, ep.port) for ep in config.advertised] == [
        ("PLAINTEXT", f"broker-{n}", 9092), ("PLAINTEXT_HOST", "localhost", 9091 + n)]
    assert config.inter_broker_listener == "PLAINTEXT"
    assert [(ep.listener, ep.port) for ep in config.listeners] == [("PLAINTEXT", 9092), ("PLAINTEXT_HOST", 19092)]
    assert [(p["published"], p["target"]) for p in service["ports"]] == [(str(9091 + n), 19092)]
    assert config["metrics.port"] == 7070 and config["metrics.host"] == "0.0.0.0"
    assert config.unknown == {}
    assert {v["target"] for v in service["volumes"]} == {"/var/lib/kafka/data", "/var/log/fauxka"}
    assert service["restart"] == "unless-stopped" and service["healthcheck"]["test"]


def test_host_name_and_ports_are_overridable():
    services = resolved({"FAUXKA_HOST": "kafka.example", "FAUXKA_PORT_2": "19999"})["services"]
    advertised = services["broker-2"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    assert advertised == "PLAINTEXT://broker-2:9092,PLAINTEXT_HOST://kafka.example:19999"
    assert services["broker-2"]["ports"][0]["published"] == "19999"


def test_one_build_per_image_and_every_service_restarts_and_is_checked():
    services = resolved()["services"]
    built = sorted(name for name, service in services.items() if "build" in service)
    # broker-2/3 run broker-1's image; the report's image is built only with its profile
    assert built == ["broker-1", "zookeeper"]
    assert services["broker-1"]["build"]["target"] == "broker"
    for name, service in services.items():
        assert service["restart"] == "unless-stopped", name
        assert service["healthcheck"]["test"], name
    for n in BROKERS:
        assert services[f"broker-{n}"]["depends_on"]["zookeeper"]["condition"] == "service_healthy"


def test_prometheus_scrapes_every_broker():
    text = (CONFIG / "prometheus.yml").read_text()
    assert re.search(r"job_name:\s*['\"]?fauxka['\"]?\s*$", text, re.MULTILINE)
    for n in BROKERS:
        assert re.search(rf"^\s*-\s*['\"]?broker-{n}:7070['\"]?\s*$", text, re.MULTILINE), f"broker-{n}:7070"
