"""A real Prometheus (Debian's `prometheus` package) scraping brokers every second, and its HTTP API."""

import contextlib
import json
import pathlib
import shutil
import subprocess
import urllib.parse
import urllib.request

import pytest

from fauxka.ports import free_ports
from fauxka.testing.cluster import wait_for

RULES = pathlib.Path(__file__).resolve().parents[1] / "config" / "prometheus" / "kafka-rules.yml"


def api(port: int, path: str, **params: str):
    url = f"http://127.0.0.1:{port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]


def query(port: int, expr: str) -> list[dict]:
    """The instant query's result (a vector: [{"metric": {...}, "value": [t, "v"]}], or a scalar)."""
    data = api(port, "query", query=expr)
    return data["result"] if data["resultType"] == "vector" else [{"metric": {}, "value": data["result"]}]


def firing(port: int, alertname: str) -> list[dict]:
    """The labels of each firing alert of that name."""
    return [a["labels"] for a in api(port, "alerts")["alerts"] if a["labels"]["alertname"] == alertname
            and a["state"] == "firing"]


@contextlib.contextmanager
def prometheus(tmp_path: pathlib.Path, targets: list[str], rules: bool = False):
    """Prometheus scraping `targets` (host:port) every second, evaluating Strimzi's Kafka alert rules
    every second if `rules`; yields its port once every target has been scraped."""
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus (Debian package prometheus) is not installed")
    port = free_ports()
    config = tmp_path / "prometheus.yml"
    rule_files = f"rule_files: [{json.dumps(str(RULES))}]\n" if rules else ""
    config.write_text(f"global: {{scrape_interval: 1s, evaluation_interval: 1s}}\n{rule_files}"
                      f"scrape_configs:\n  - job_name: fauxka\n    static_configs:\n"
                      f"      - targets: {json.dumps(targets)}\n")
    log = (tmp_path / "prometheus.log").open("w")
    process = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: _all_up(port, len(targets)), 30, interval_s=0.2, what="Prometheus scraping every target")
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()


def _all_up(port: int, count: int) -> bool:
    try:
        return sum(float(r["value"][1]) for r in query(port, "up")) == count
    except OSError:
        return False
