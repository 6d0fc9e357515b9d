"""What the README's commands leave in a checkout is ignored by git."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", ["chaos-7/history.jsonl", "chaos-7/timeline.png", "chaos-42-20261207-063000/verdict.json",
                                  ".fauxka/broker-1.log"])
def test_left_behind_files_are_ignored(path):
    # `fauxka chaos --out chaos-7` (README) and its default `chaos-SEED-TIME` write there
    result = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT)
    assert result.returncode == 0, f"{path} is not ignored"
