"""The docker-compose cluster's files: compose validates, broker configs load."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from broker.config import load_config

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"
BROKERS = (1, 2, 3)


def test_compose_file_validates():
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose binary not found on PATH")
    result = subprocess.run(
        [binary, "-f", "docker-compose.yml", "config", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("n", BROKERS)
def test_broker_properties(n):
    config = load_config(CONFIG / f"broker-{n}.properties")
    assert config.broker_id == n
    assert config["zookeeper.connect"] == "zookeeper:2181"
    assert [ep.host for ep in config.advertised] == [f"broker-{n}"]
    assert [(ep.host, ep.port) for ep in config.listeners] == [("0.0.0.0", 9092)]
    assert config["metrics.port"] == 7070
    assert config["metrics.host"] == "0.0.0.0"
    assert config.unknown == {}


def test_prometheus_scrapes_every_broker():
    text = (CONFIG / "prometheus.yml").read_text()
    assert re.search(r"job_name:\s*['\"]?fauxka['\"]?\s*$", text, re.MULTILINE)
    for n in BROKERS:
        assert re.search(rf"^\s*-\s*['\"]?broker-{n}:7070['\"]?\s*$", text, re.MULTILINE), f"broker-{n}:7070"
