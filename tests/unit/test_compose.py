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


def test_tls_compose_file_validates():
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose binary not found on PATH")
    result = subprocess.run([binary, "-f", "docker-compose.yml", "-f", "docker-compose.tls.yml", "config", "-q"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def tls_overrides(n: int) -> list[str]:
    """The `--override` values of broker n in docker-compose.tls.yml (a plain list in the file)."""
    text = (ROOT / "docker-compose.tls.yml").read_text()
    block = text.split(f"  broker-{n}:\n", 1)[1].split("\n\n", 1)[0]
    items = [line.strip()[2:] for line in block.splitlines() if line.strip().startswith("- ")]
    return [items[i + 1] for i, item in enumerate(items) if item == "--override"]


@pytest.mark.parametrize("n", BROKERS)
def test_tls_broker_configs_load_with_the_certs_service_material(n, tmp_path):
    from fauxka.cli import main

    assert main(["certs", "--out", str(tmp_path), "--host", f"broker-{n}"]) == 0
    overrides = [o.replace("/tls/", f"{tmp_path}/") for o in tls_overrides(n)]
    config = load_config(CONFIG / f"broker-{n}.properties", overrides)
    assert [(ep.listener, ep.host) for ep in config.advertised] == [("SSL", f"broker-{n}")]
    assert set(config.tls.listeners) == {"SSL"} and config.tls.inter_broker is not None
    assert config.unknown == {}
