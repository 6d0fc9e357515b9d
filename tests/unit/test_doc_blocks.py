"""Every code block of README.md and docs/ is run by a test or marked why not (tests/doc_blocks.py);
synopses name only flags their command has; broker properties load."""

import re
import subprocess
import sys

import pytest

from fauxka.broker.config import config_from_dict
from fauxka.broker.properties import parse_properties
from tests.doc_blocks import ROOT, blocks

RUN_TEST = (ROOT / "tests" / "integration" / "test_doc_blocks.py").read_text()


def test_every_block_is_run_or_says_why_not():
    unmarked = [str(b) for b in blocks() if b.marker is None
                or not re.fullmatch(r"run [\w-]+|synopsis|config|not run: .{10,}", b.marker)]
    assert unmarked == []


def test_every_block_marked_run_is_run():
    names = [b.marker.split()[1] for b in blocks() if b.marker.startswith("run ")]
    assert names and len(names) == len(set(names))
    assert [n for n in names if f'"{n}"' not in RUN_TEST] == []


def _fauxka_lines(text: str) -> list[str]:
    """The fauxka commands of a block, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    joined = re.sub(r"\n\s+(?=\[)", " ", joined)  # a synopsis' wrapped [options]
    return [line for line in joined.splitlines() if re.match(r"\s*(\.venv/bin/)?fauxka ", line)]


@pytest.mark.parametrize("block", [b for b in blocks() if b.marker == "synopsis"], ids=str)
def test_a_synopsis_names_real_commands_and_flags(block):
    lines = _fauxka_lines(block.text)
    assert lines, block
    for line in lines:
        line = line.split("#")[0]
        words = line.split()
        words = [w.split("|")[0] for w in words[words.index(next(w for w in words if w.endswith("fauxka"))) + 1:]]
        command = words[:2] if words[0] == "fault" else words[:1]  # the first of alternatives (kill|pause|...)
        flags = set(re.findall(r"(--[a-z][a-z-]*)", line))
        helped = subprocess.run([sys.executable, "-m", "fauxka", *command, "--help"], capture_output=True, text=True,
                                timeout=60)
        assert helped.returncode == 0, (line, helped.stderr)
        assert sorted(f for f in flags if f not in helped.stdout) == [], line


@pytest.mark.parametrize("block", [b for b in blocks() if b.marker == "config"], ids=str)
def test_broker_properties_load(block, tmp_path):
    from fauxka.certs import PKCS12_PASSWORD, generate

    files = generate(tmp_path)  # the stores a block names, made here (its password: the block's)
    text = (block.text.replace("/etc/fauxka/broker.p12", str(files.broker_p12))
            .replace("/etc/fauxka/ca.pem", str(files.ca)).replace("password=secret", f"password={PKCS12_PASSWORD}"))
    raw = parse_properties(text)
    config = config_from_dict({"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181", **raw})
    assert config.unknown == {}
    assert {ep.listener for ep in config.listeners} == {k.split("://")[0] for k in raw["listeners"].split(",")}
