"""Runs librdkafka's own integration tests (its tests/test-runner) one test number at a time against
a fresh `fauxka up` per scenario (conformance/scenarios.py: default, ssl, sasl_ssl_scram,
sasl_ssl_plain, sasl_ssl_oauthbearer, noautocreate; --scenario picks some), and prints a table with a
column per scenario.

scripts/conformance fetches and builds librdkafka first, then runs this. The tests left out, and
why, are in conformance/excluded.txt. --quick runs test-runner's quick mode (-Q), which CI runs: every
chosen test in the default and noautocreate scenarios, a few in each secured one (Scenario.quick)."""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import ssl_material
from scenarios import (SCENARIOS, SECURE_PORT_OFFSET, Scenario, broker_settings, client_settings, listeners, prepare,
                       rack)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KAFKA_VERSION = "3.9.0"  # what the cluster stands in for: the tests pick their features by it

# A summary line of test-runner: "|<colour> 0001_multiobj   |     PASSED |   3.210s <colour>| reason"
SUMMARY = re.compile(r"^\|\S*\s+(?P<name>\d{4}_\w+)\s+\|\s+(?P<state>[A-Z_]+)\s+\|\s+(?P<secs>[\d.]+)s\s*\S*\|(?P<rest>.*)$")
FAILURE = re.compile(r'^### Test "(?P<test>[^"]+)" failed at (?P<where>\S+) at .*: ###$')
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Row:
    test: str
    result: str
    seconds: float
    failure: str = ""


def numbers_in(path: Path) -> dict[str, str]:
    """`NNNN  text` lines of a list file (# comments)."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if line:
            number, _, text = line.partition(" ")
            out[number] = text.strip()
    return out


def all_numbers(tests_dir: Path) -> list[str]:
    return sorted({p.name[:4] for p in tests_dir.glob("0[0-9][0-9][0-9]-*.c*")})


def start_cluster(data_dir: Path, brokers: int, scenario: Scenario, ssl, reauth: bool = False) -> dict:
    sys.path.insert(0, str(ROOT))
    from fauxka.ports import free_ports

    zk = free_ports(1)
    # one free block from the first broker's port to the last one's secure listener (base + offset)
    base = free_ports(brokers + (SECURE_PORT_OFFSET if scenario.protocol != "PLAINTEXT" else 0))
    metrics = free_ports(brokers + 1)  # broker N's /metrics on metrics + N: the JmxTool stand-in reads it
    command = [str(ROOT / ".venv/bin/fauxka"), "up", "--detach", "--brokers", str(brokers),
               "--data-dir", str(data_dir), "--base-port", str(base), "--zookeeper-port", str(zk),
               "--metrics-base-port", str(metrics), "--timeout", "180"]
    for item in broker_settings(scenario, ssl, reauth):
        command += ["--override", item]
    for broker_id in range(1, brokers + 1):
        command += ["--broker-override", f"{broker_id}:listeners={listeners(scenario, base + broker_id - 1)}",
                    "--broker-override", f"{broker_id}:broker.rack={rack(broker_id)}"]
    subprocess.run(command, check=True, cwd=ROOT)
    state = json.loads((data_dir / "cluster.json").read_text())
    prepare(scenario, plaintext_bootstrap(state), [secure_address(scenario, b) for b in state["brokers"]], ssl)
    return state


def plaintext_bootstrap(state: dict) -> str:
    return ",".join(f"127.0.0.1:{b['port']}" for b in state["brokers"])


def secure_address(scenario: Scenario, broker: dict) -> str:
    port = broker["port"] + (SECURE_PORT_OFFSET if scenario.protocol != "PLAINTEXT" else 0)
    return f"127.0.0.1:{port}"


def stop_cluster(data_dir: Path) -> None:
    subprocess.run([str(ROOT / ".venv/bin/fauxka"), "down", "--data-dir", str(data_dir)], cwd=ROOT)


def kafka_path(work: Path, java_lib: Path) -> Path:
    """A stand-in for KAFKA_PATH (a Kafka distribution): bin/ with the tools the tests run
    (conformance/kafka/bin) and libs/ with Kafka's Java client, named as in Kafka's libs/ (the
    tests' java/Makefile looks for kafka-clients-*.jar). The jars are the ones scripts/install
    fetches for the project's Java client tests (kafka-clients 3.9.1 and what it needs)."""
    path = work / "kafka"
    subprocess.run(["rm", "-rf", str(path)], check=True)
    (path / "libs").mkdir(parents=True)
    (path / "bin").symlink_to(HERE / "kafka" / "bin")
    for jar in sorted(java_lib.glob("*.jar")):
        name = "kafka-clients-3.9.1.jar" if jar.name == "kafka-clients.jar" else jar.name
        (path / "libs" / name).symlink_to(jar.resolve())
    return path


def test_environment(state: dict, work: Path, multiplier: float, java_lib: Path, librdkafka: Path,
                     scenario: Scenario, ssl) -> dict:
    """What trivup's LibrdkafkaTestApp hands the test-runner: test.conf (the scenario's listener and
    security settings), BROKERS, ZK_ADDRESS, BROKER_ADDRESS_<id>, BROKER_JMX_PORT_<id> (here: the
    broker's /metrics, which the stand-in JmxTool reads), KAFKA_PATH (here: the stand-in CLI
    tools), TEST_KAFKA_VERSION, TEST_SCENARIO, and with TLS the SSL_* files."""
    secure = ",".join(secure_address(scenario, b) for b in state["brokers"])
    conf = work / f"test-{scenario.name}.conf"
    conf.write_text("\n".join([
        "broker.address.family=v4",
        f"test.timeout.multiplier={multiplier:g}",
        f"bootstrap.servers={secure}",
        *client_settings(scenario, ssl),
        ""]))
    env = dict(os.environ, RDKAFKA_TEST_CONF=str(conf), BROKERS=plaintext_bootstrap(state),
               ZK_ADDRESS=state["zookeeper_connect"], KAFKA_PATH=str(kafka_path(work, java_lib)),
               TEST_KAFKA_VERSION=KAFKA_VERSION, TEST_SCENARIO=scenario.test_scenario,
               RDKAFKA_GITVER="2.12.0 (node-rdkafka 3.6.1)")
    if scenario.tls:
        env.update(ssl.env)
    # The libraries just built, not a system librdkafka (kcat's Debian package brings one): as run-test.sh does
    env["LD_LIBRARY_PATH"] = ":".join(filter(None, [str(librdkafka / "src"), str(librdkafka / "src-cpp"),
                                                    os.environ.get("LD_LIBRARY_PATH")]))
    env.pop("CI", None)  # test-runner shortens its timeouts under CI; the suite's defaults stand
    for b in state["brokers"]:
        env[f"BROKER_ADDRESS_{b['id']}"] = f"{scenario.protocol}://{secure_address(scenario, b)}"
        env[f"BROKER_PID_{b['id']}"] = str(b["pid"])
        if b.get("metrics_port"):  # trivup's JMX port; kafka/bin/jmx_tool.py reads /metrics there
            env[f"BROKER_JMX_PORT_{b['id']}"] = str(b["metrics_port"])
    return env


def run_one(number: str, tests_dir: Path, env: dict, log_dir: Path, timeout_s: float, quick: bool) -> list[Row]:
    """test-runner's flags as librdkafka's own broker runs pass them (LibrdkafkaTestApp): -L no
    local tests, -K no known issues, -E no sockem, one test at a time; -Q (its quick mode: fewer
    iterations, less data, some sub-tests left out) for the quick run."""
    log = log_dir / f"{number}.log"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(["./test-runner", *(["-Q"] if quick else []), "-L", "-K", "-E", "-p1"], cwd=tests_dir,
                                env=dict(env, TESTS=number), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            code = None
    elapsed = time.monotonic() - started
    text = ANSI.sub("", log.read_text(errors="replace"))
    rows = summary_rows(text, number)
    if code is None:
        return [Row(number, "TIMEOUT", elapsed, f"killed after {timeout_s:.0f} s; last line: {_last(text)}")]
    failure = first_failure(text)
    if not rows:  # test-runner died before its summary (it aborts when a failure leaves threads behind)
        name = failure[0].split(" ")[0] if failure else number
        detail = failure[1] if failure else f"last line: {_last(text)}"
        return [Row(name, "FAILED" if code else "NO TEST", elapsed, f"(exit {code}) {detail}")]
    for row in rows:
        if row.result == "FAILED" and failure:
            row.failure = failure[1]
    return rows


def summary_rows(text: str, number: str) -> list[Row]:
    """The rows of test-runner's closing summary (colours removed) for the tests of `number`.
    Not rows of the table: tests of other numbers, this number's local/sockem/known-issue ones
    (-L -E -K: skipped "due to test flags") and those of another scenario (skipped without a reason)."""
    rows = []
    for line in text.splitlines():
        m = SUMMARY.match(line)
        if m and m["name"][:4] == number and "test flags" not in m["rest"] and (
                m["state"] != "SKIPPED" or m["rest"].strip()):
            rows.append(Row(m["name"], m["state"], float(m["secs"]), m["rest"].strip()))
    return rows


def first_failure(text: str) -> tuple[str, str] | None:
    """The first `### Test "NAME (subtest)" failed at FILE:LINE:FUNC() at DATE: ###` of a log, and
    its message (the next line): (NAME (subtest), "FILE:LINE:FUNC(): message")."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = FAILURE.match(line)
        if m:
            message = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return m["test"], f"{m['where']}: {message}"[:300]
    return None


def _last(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


def scenario_table(by_scenario: dict[str, list[Row]]) -> str:
    """A row per test, a column per scenario (result and seconds; - where it did not run), then the
    first failure of each failed cell."""
    names = list(by_scenario)
    tests = list(dict.fromkeys(r.test for rows in by_scenario.values() for r in rows))
    cells = {(name, r.test): r for name, rows in by_scenario.items() for r in rows}
    lines = ["| test | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for test in sorted(tests):
        row = [f"{cells[(n, test)].result} {cells[(n, test)].seconds:.1f} s" if (n, test) in cells else "-"
               for n in names]
        lines.append(f"| {test} | " + " | ".join(row) + " |")
    failures = [f"- {name} {r.test}: {r.result} {r.failure}" for name, rows in by_scenario.items() for r in rows
                if r.result not in ("PASSED", "SKIPPED")]
    return "\n".join(lines + ([""] + failures if failures else []))


def chosen_numbers(scenario: Scenario, requested: list[str], everything: list[str], quick: bool) -> list[str]:
    """The numbers a scenario runs: those asked for (of its own, if it has its own), else its own,
    else in --quick its quick subset, else every number not excluded."""
    if requested:
        return [n for n in requested if not scenario.only or n in scenario.only]
    if scenario.only:
        return list(scenario.only)
    if quick and scenario.quick:
        return list(scenario.quick)
    return everything


def run_scenario(scenario: Scenario, numbers: list[str], args, tests_dir: Path, work: Path, ssl) -> list[Row]:
    """The scenario's numbers on a fresh cluster; those in Scenario.reauth on a second one, after."""
    logs = work / "logs" / scenario.name
    logs.mkdir(parents=True)
    rows: list[Row] = []
    for reauth in (False, True):
        chosen = [n for n in numbers if (n in scenario.reauth) == reauth]
        if chosen:
            print(f"\n== scenario {scenario.name}{' (re-authenticating brokers)' if reauth else ''}: "
                  f"{len(chosen)} test numbers ==", flush=True)
            rows += run_on_cluster(scenario, reauth, chosen, args, tests_dir, work, ssl, logs)
    return rows


def run_on_cluster(scenario: Scenario, reauth: bool, numbers: list[str], args, tests_dir: Path, work: Path, ssl,
                   logs: Path) -> list[Row]:
    data_dir = work / "cluster"
    if (data_dir / "cluster.json").exists():
        stop_cluster(data_dir)  # a run interrupted before it stopped its cluster
    subprocess.run(["rm", "-rf", str(data_dir)], check=True)
    state = start_cluster(data_dir, 3, scenario, ssl, reauth)
    rows: list[Row] = []
    try:
        env = test_environment(state, work, args.multiplier, args.java_lib, tests_dir.parent, scenario, ssl)
        for number in numbers:
            new = run_one(number, tests_dir, env, logs, args.timeout, args.quick and scenario.runner_quick)
            for row in new:
                print(f"{row.test:<48} {row.result:<8} {row.seconds:7.1f}  {row.failure[:160]}", flush=True)
            rows += new
    finally:
        stop_cluster(data_dir)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--librdkafka", type=Path, required=True, help="built librdkafka source tree")
    p.add_argument("--work", type=Path, required=True, help="cluster data, logs and the result table go here")
    p.add_argument("--quick", action="store_true",
                   help="test-runner's quick mode (-Q: its sub-tests marked quick, fewer messages), a few tests "
                        "in each secured scenario: what CI runs")
    p.add_argument("--scenario", action="append", choices=list(SCENARIOS),
                   help="run in this scenario (repeatable; default: every one)")
    p.add_argument("--java-lib", type=Path, default=ROOT / ".cache" / "java-clients" / "lib",
                   help="kafka-clients.jar and the jars it needs (scripts/install fetches them)")
    p.add_argument("--multiplier", type=float, default=2.0,
                   help="test.timeout.multiplier (trivup's 2)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds one test number may take in all")
    p.add_argument("tests", nargs="*", help="test numbers (default: all but conformance/excluded.txt)")
    args = p.parse_args(argv)

    tests_dir = args.librdkafka.resolve() / "tests"
    excluded = numbers_in(HERE / "excluded.txt")
    everything = [n for n in all_numbers(tests_dir) if n not in excluded]
    scenarios = [SCENARIOS[name] for name in (args.scenario or SCENARIOS)]
    work = args.work.resolve()
    subprocess.run(["rm", "-rf", str(work / "logs")], check=True)
    result = work / "results.md"
    ssl = ssl_material.make(work / "ssl") if any(s.tls for s in scenarios) else None

    started = time.monotonic()
    by_scenario: dict[str, list[Row]] = {}
    for scenario in scenarios:
        numbers = chosen_numbers(scenario, args.tests, everything, args.quick)
        if numbers:
            by_scenario[scenario.name] = run_scenario(scenario, numbers, args, tests_dir, work, ssl)
            result.write_text(f"(running)\n\n{scenario_table(by_scenario)}\n")
    total = time.monotonic() - started
    rows = [r for rows in by_scenario.values() for r in rows]
    failed = [r for r in rows if r.result not in ("PASSED", "SKIPPED")]
    counts = "; ".join(f"{name}: {sum(r.result == 'PASSED' for r in rs)}/{len(rs)} passed"
                       for name, rs in by_scenario.items())
    summary = (f"librdkafka 2.12.0 test-runner against fauxka{' (quick mode)' if args.quick else ''}: "
               f"{len(rows)} tests, {sum(r.result == 'PASSED' for r in rows)} passed, {len(failed)} not passed, "
               f"{sum(r.result == 'SKIPPED' for r in rows)} skipped ({counts}); {total / 60:.1f} min in all "
               f"(logs in {work / 'logs'})")
    result.write_text(f"{summary}\n\n{scenario_table(by_scenario)}\n")
    print(f"\n{scenario_table(by_scenario)}\n\n{summary}\ntable written to {result}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
