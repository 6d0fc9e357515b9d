"""Strimzi's Kafka alert rules as the compose Prometheus loads them: valid, and each alert fires on the
series a fauxka broker serves (promtool's rule unit tests, config/prometheus/kafka-rules.test.yml)."""

import pathlib
import re
import shutil
import subprocess

import pytest

RULES = pathlib.Path(__file__).resolve().parents[2] / "config" / "prometheus"

pytestmark = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus) missing")


def _promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["promtool", *args], cwd=RULES, capture_output=True, text=True, timeout=60)


def test_the_rules_are_valid():
    result = _promtool("check", "rules", "kafka-rules.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_test_rules_passes():
    result = _promtool("test", "rules", "kafka-rules.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_unit_test():
    alerts = set(re.findall(r"^\s*- alert: (\w+)$", (RULES / "kafka-rules.yml").read_text(), re.M))
    tested = set(re.findall(r"^\s*alertname: (\w+)$", (RULES / "kafka-rules.test.yml").read_text(), re.M))
    assert alerts == tested == {"UnderReplicatedPartitions", "AbnormalControllerState", "OfflinePartitions",
                                "UnderMinIsrPartitionCount", "OfflineLogDirectoryCount"}


def test_the_compose_prometheus_config_loads_the_rules(tmp_path):
    """config/prometheus.yml as the compose Prometheus reads it, its rule file where compose mounts it."""
    text = (RULES.parent / "prometheus.yml").read_text()
    assert "/etc/prometheus/rules/kafka-rules.yml" in text
    config = tmp_path / "prometheus.yml"
    config.write_text(text.replace("/etc/prometheus/rules/kafka-rules.yml", str(RULES / "kafka-rules.yml")))
    result = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 5 rules found" in result.stdout, result.stdout
