"""The README's pytest example, run as written in a pytest of its own (the plugin's fixtures)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_readme_pytest_example_passes(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    [example] = [b for b in blocks if "def test_" in b]
    assert "fauxka_cluster.bootstrap" in example
    (tmp_path / "test_readme_example.py").write_text(example)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_readme_example.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout
