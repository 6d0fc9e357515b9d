"""A stand-in for Kafka's JmxTool (kafka.tools.JmxTool, org.apache.kafka.tools.JmxTool) as librdkafka's
0016 runs it: `--jmx-url service:jmx:rmi:///jndi/rmi://:PORT/jmxrmi --object-name PATTERN --one-time true`.
fauxka has no JMX; its brokers serve Kafka's MBeans as the JMX exporter with Strimzi's rules names them
(docs/kafka-metrics.md), on the port conformance/run.py hands the tests as BROKER_JMX_PORT_<id>. This
reads that /metrics page, turns each series back into its MBean's ObjectName (its keys in JMX's
canonical, sorted order) and prints what JmxTool prints with --one-time: a header of quoted
"ObjectName:attribute" columns and one line of values. Only the beans 0016 asks for are mapped."""

import fnmatch
import re
import sys
import time
import urllib.request

# Prometheus name -> (MBean domain, type key, attribute, label names that are ObjectName keys)
BEANS = {
    "kafka_server_socket_server_metrics_connections_software": (
        "kafka.server", "socket-server-metrics", "connections",
        ("clientSoftwareName", "clientSoftwareVersion", "listener", "networkProcessor")),
}
SAMPLE = re.compile(r'^(\w+)\{(.*)\}\s+(\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _argument(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def beans(text: str) -> list[tuple[str, str]]:
    """(ObjectName:attribute, value) of every mapped series in a /metrics page."""
    out = []
    for line in text.splitlines():
        found = SAMPLE.match(line)
        if not found or found.group(1) not in BEANS:
            continue
        domain, kind, attribute, keys = BEANS[found.group(1)]
        labels = dict(LABEL.findall(found.group(2)))
        properties = {key: labels[key] for key in keys if key in labels} | {"type": kind}
        name = domain + ":" + ",".join(f"{k}={v}" for k, v in sorted(properties.items()))
        out.append((f"{name}:{attribute}", found.group(3)))
    return out


def main(argv: list[str]) -> int:
    url = _argument(argv, "--jmx-url") or ""
    port = re.search(r":(\d+)/jmxrmi", url)
    if port is None:
        print(f"JmxTool stand-in: no port in --jmx-url {url!r}", file=sys.stderr)
        return 1
    pattern = _argument(argv, "--object-name") or "*"
    with urllib.request.urlopen(f"http://127.0.0.1:{port.group(1)}/metrics", timeout=10) as response:
        found = [(n, v) for n, v in beans(response.read().decode())
                 if fnmatch.fnmatchcase(n.rsplit(":", 1)[0], pattern)]
    print(",".join(['"time"', *(f'"{n}"' for n, _ in found)]))
    print(",".join([str(int(time.time() * 1000)), *(v for _, v in found)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
