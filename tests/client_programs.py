"""Kafka clients in other languages, run as programs against a cluster: Kafka's Java client
(kafka-clients 3.9.1, its jars fetched by scripts/install into .cache/java-clients/lib) and kafkajs
(npm, pinned in tests/clients/js). Each program runs scenarios one after another in one process
(one JVM start, not one per test) and prints one JSON line per scenario, which the tests check."""

import hashlib
import json
import os
import subprocess
from pathlib import Path

from tests.admin_helpers import KEEP_OLD_RECORDS, create_topics, partition_count, topic_spec, unique
from tests.harness import wait_for

ROOT = Path(__file__).resolve().parent.parent
JAVA_LIB = ROOT / ".cache" / "java-clients" / "lib"
JAVA_SOURCES = ROOT / "tests" / "clients" / "java"
JS_DIR = ROOT / "tests" / "clients" / "js"
MISSING = "missing: run `make install` (scripts/install fetches the test clients)"


def java_command() -> list[str]:
    """`java -cp ... ClientScenarios`, compiled first when its sources changed (classes kept by their hash)."""
    if not (JAVA_LIB / "kafka-clients.jar").exists():
        raise RuntimeError(f"{JAVA_LIB / 'kafka-clients.jar'} {MISSING}")
    sources = sorted(JAVA_SOURCES.glob("*.java"))
    digest = hashlib.sha256(b"".join(s.read_bytes() for s in sources)).hexdigest()[:16]
    classes = ROOT / ".cache" / "java-clients" / f"classes-{digest}"
    classpath = f"{classes}:{JAVA_LIB}/*"
    if not (classes / "ClientScenarios.class").exists():
        building = classes.with_name(classes.name + ".tmp")
        done = subprocess.run(["javac", "-nowarn", "-d", str(building), "-cp", classpath, *map(str, sources)],
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"javac failed:\n{done.stdout}{done.stderr}")
        building.rename(classes)
    # a short run on a busy machine: no optimising JIT (C1 only), no parallel GC threads
    return ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classpath, "ClientScenarios"]


def node_command() -> list[str]:
    if not (JS_DIR / "node_modules" / "kafkajs").exists():
        raise RuntimeError(f"{JS_DIR / 'node_modules' / 'kafkajs'} {MISSING}")
    return ["node", str(JS_DIR / "scenarios.js")]


def run_scenarios(command: list[str], bootstrap: str, scenarios: dict[str, list[str]],
                  timeout_s: float = 240, client_config: Path | None = None) -> dict[str, dict]:
    """Runs `command BOOTSTRAP name:topic,topic ...`: each scenario's JSON line by its name.
    `client_config`: a properties file every client of the Java program loads (FAUXKA_CLIENT_CONFIG)."""
    args = [f"{name}:{','.join(topics)}" for name, topics in scenarios.items()]
    env = {**os.environ, "FAUXKA_CLIENT_CONFIG": str(client_config)} if client_config else None
    done = subprocess.run([*command, bootstrap, *args], capture_output=True, text=True, timeout=timeout_s, env=env)
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
            results[result["scenario"]] = result
    if done.returncode != 0 or set(results) != set(scenarios):
        raise RuntimeError(f"{command[0]} exited {done.returncode} with results for {sorted(results)}:\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return results


def topics(cluster, prefix: str, partitions: dict[str, int]) -> dict[str, str]:
    """Topics (role -> unique name) created at the controller, known to every broker when it returns."""
    names = {role: unique(f"{prefix}-{role}") for role in partitions}
    results = create_topics(cluster.controller_address(),  # the produce scenarios write 2023 timestamps
                            [topic_spec(names[role], count, 3, configs=KEEP_OLD_RECORDS)
                             for role, count in partitions.items()])
    assert all(int(r.error_code) == 0 for r in results), results
    for role, name in names.items():
        for broker_id in cluster.brokers:
            wait_for(lambda: partition_count(cluster.address_of(broker_id), name) == partitions[role], 30,
                     what=f"broker {broker_id} knowing {name}")
    return names


def run_every_scenario(cluster, command: list[str], prefix: str, **extra: list[str]) -> tuple[dict, dict]:
    """The scenarios both programs have, each on its own new topics, plus `extra` ones: (results, topics)."""
    names = topics(cluster, prefix, {"produce": 3, "group": 4, "txn-in": 1, "txn-out": 1})
    results = run_scenarios(command, cluster.bootstrap, {
        "produce": [names["produce"]],
        "group": [names["group"]],
        "transactions": [names["txn-in"], names["txn-out"]],
        "admin": [unique(f"{prefix}-admin")],  # created by the client
        **extra,
    })
    return results, names


def scenario(results: dict[str, dict], name: str) -> dict:
    """One scenario's result; the client's own stack trace as the failure when it threw."""
    result = results[name]
    if "error" in result:
        raise AssertionError(f"{name} failed in the client:\n{result['error']}")
    return result
