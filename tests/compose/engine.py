"""The shipped docker-compose.yml run with the real engine (`docker compose`, v2), for the compose test.

A project of its own name, and its own free host ports through the file's FAUXKA_* variables, so
it neither meets a user's `fauxka` project nor a `fauxka up` on 9092."""

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from fauxka.ports import free_ports

ROOT = Path(__file__).resolve().parents[2]
TLS_OVERLAY = ROOT / "docker-compose.tls.yml"
SERVICES = ("zookeeper", "broker-1", "broker-2", "broker-3", "prometheus")
BROKERS = ("broker-1", "broker-2", "broker-3")


class ComposeError(AssertionError):
    pass


@dataclass
class Compose:
    project: str = "fauxka-compose-test"
    env: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    files: tuple[Path, ...] = ()  # compose files merged over the shipped one in every command

    @classmethod
    def with_free_ports(cls, project: str = "fauxka-compose-test", files: tuple[Path, ...] = ()) -> "Compose":
        base = free_ports(8)
        ports = {"FAUXKA_PORT_1": base, "FAUXKA_PORT_2": base + 1, "FAUXKA_PORT_3": base + 2,
                 "FAUXKA_ZOOKEEPER_PORT": base + 3, "FAUXKA_PROMETHEUS_PORT": base + 4,
                 "FAUXKA_TLS_PORT_1": base + 5, "FAUXKA_TLS_PORT_2": base + 6, "FAUXKA_TLS_PORT_3": base + 7}
        return cls(project=project, files=files,
                   env={"FAUXKA_HOST": "localhost", **{k: str(v) for k, v in ports.items()}})

    def port(self, name: str) -> int:
        return int(self.env[name])

    @property
    def bootstrap(self) -> str:
        return ",".join(f"localhost:{self.port(f'FAUXKA_PORT_{n}')}" for n in (1, 2, 3))

    @property
    def tls_bootstrap(self) -> str:
        """The SSL_HOST listeners of docker-compose.tls.yml."""
        return ",".join(f"localhost:{self.port(f'FAUXKA_TLS_PORT_{n}')}" for n in (1, 2, 3))

    @property
    def network(self) -> str:
        return f"{self.project}_default"

    def run(self, *args: str, timeout_s: float = 180, check: bool = True,
            overrides: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
        """docker compose with the shipped file (and `files`, then `overrides`, merged over it)."""
        paths = (ROOT / "docker-compose.yml", *self.files, *overrides)
        files = [arg for path in paths for arg in ("-f", str(path))]
        command = ["docker", "compose", "-p", self.project, *files, *args]
        env = {**os.environ, **self.env}
        try:
            result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise ComposeError(f"docker compose {' '.join(args)} took over {timeout_s:.0f}s") from exc
        if check and result.returncode != 0:
            raise ComposeError(f"docker compose {' '.join(args)} exited {result.returncode}:\n"
                               f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def up(self, *extra: str, label: str | None = None) -> float:
        """`up -d --wait` (every service healthy), timed."""
        started = time.monotonic()
        try:
            self.run("up", "-d", "--wait", *extra, timeout_s=600)
        except ComposeError as exc:
            raise ComposeError(f"{exc}\n--- logs ---\n{self.logs()[-4000:]}") from None
        elapsed = time.monotonic() - started
        if label:
            self.timings[label] = elapsed
        return elapsed

    def down(self, volumes: bool = False) -> None:
        self.run("down", "--remove-orphans", *(("-v",) if volumes else ()), timeout_s=120)

    def logs(self, *services: str) -> str:
        result = self.run("logs", "--no-color", *services, check=False)
        return result.stdout + result.stderr

    def container(self, service: str) -> str:
        cid = self.run("ps", "-q", service).stdout.strip()
        if not cid:
            raise ComposeError(f"no container for {service}")
        return cid

    def inspect(self, service: str) -> dict:
        return self.inspect_id(self.container(service))

    @staticmethod
    def inspect_id(container: str) -> dict:
        return json.loads(docker("inspect", container).stdout)[0]

    def health(self, service: str) -> str:
        state = self.inspect(service)["State"]
        return state.get("Health", {}).get("Status", "none") if state["Running"] else state["Status"]

    def volumes(self) -> list[str]:
        out = docker("volume", "ls", "-q", "--filter", f"label=com.docker.compose.project={self.project}").stdout
        return sorted(out.split())

    def in_network(self, script: str, timeout_s: float = 60) -> str:
        """Run a Python script in a container of the broker image on the compose network."""
        result = docker("run", "--rm", "--network", self.network, "fauxka-broker:latest",
                        "python", "-c", script, timeout_s=timeout_s, check=False)
        if result.returncode != 0:
            raise ComposeError(f"script in the compose network exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result.stdout


def docker(*args: str, timeout_s: float = 60, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout_s)
    if check and result.returncode != 0:
        raise ComposeError(f"docker {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return result


def engine_available() -> str | None:
    """None when `docker compose` v2 and the engine answer; else why not."""
    try:
        docker("info", timeout_s=10)
        docker("compose", "version", timeout_s=10)
    except (OSError, subprocess.TimeoutExpired, ComposeError) as exc:
        return str(exc)
    return None

