"""The code blocks of README.md and docs/ marked `<!-- doc-block: run NAME -->` (tests/doc_blocks.py),
run as a reader runs them: from a working directory holding `.venv` and the `.fauxka` of a `fauxka up`
cluster, the README's localhost:9092 being that cluster's first broker (its ports are free ones)."""

import subprocess
import sys

import pytest

from fauxka.ports import free_ports
from tests.doc_blocks import ROOT, block


def _run(args: list[str], cwd, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """(the reader's directory, the first broker's port) with a 3-broker `fauxka up` cluster in ./.fauxka."""
    home = tmp_path_factory.mktemp("reader")
    (home / ".venv").symlink_to(ROOT / ".venv")
    zk, base, metrics = free_ports(), free_ports(3), free_ports(3)
    up = _run([sys.executable, "-m", "fauxka", "up", "--data-dir", ".fauxka", "--zookeeper-port", str(zk),
               "--base-port", str(base), "--metrics-base-port", str(metrics - 1), "--detach"], home)
    assert up.returncode == 0, up.stderr
    try:
        yield home, base
    finally:
        _run([sys.executable, "-m", "fauxka", "down", "--data-dir", ".fauxka"], home)


def _script(name: str, port: int) -> str:
    return block(name).text.replace("localhost:9092", f"localhost:{port}")


def test_the_tour(reader):
    home, port = reader
    result = _run(["bash", "-e", "-c", _script("readme-tour", port)], home)
    assert result.returncode == 0, result.stderr
    assert "hello\n" in result.stdout and "brokers:    1, 2, 3" in result.stdout, result.stdout


def test_the_client_example(reader):
    home, port = reader
    result = _run([sys.executable, "-c", _script("readme-client", port)], home)
    assert (result.returncode, result.stdout) == (0, "b'v'\n"), result.stderr


def test_breaking_it_on_purpose(reader):
    home, port = reader
    result = _run(["bash", "-e", "-c", _script("readme-faults", port)], home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "removed 2 fault(s)", result.stdout


@pytest.mark.parametrize("name, passed", [("readme-pytest", 2), ("fault-kit-pytest", 3)])
def test_the_pytest_examples(name, passed, tmp_path):
    """Under the plugin that `pip install fauxka` registers: its session cluster and private ones."""
    (tmp_path / "test_example.py").write_text(block(name).text)
    result = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"], tmp_path, 300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert f"{passed} passed" in result.stdout
