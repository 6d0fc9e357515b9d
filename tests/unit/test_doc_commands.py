"""What README.md and docs/ tell a reader to run names things that exist: every `python -m MODULE` is a
module that runs, every import in a ```python block imports, and `python -m fauxka.pipeline` says its
own name in its usage line (it said `python -m pipeline`, a module that no longer exists)."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), re.S)


def test_every_python_dash_m_names_a_runnable_module():
    named = {m for page in PAGES for m in re.findall(r"python -m ([A-Za-z_][\w.]*)", page.read_text())}
    assert "fauxka.pipeline" in named
    sys.path.insert(0, str(ROOT))  # bench/ runs from a checkout
    try:
        missing = sorted(m for m in named if importlib.util.find_spec(m) is None
                         or (importlib.util.find_spec(m).submodule_search_locations is not None
                             and importlib.util.find_spec(f"{m}.__main__") is None))
    finally:
        sys.path.remove(str(ROOT))
    assert missing == []


@pytest.mark.parametrize("page", [p for p in PAGES if _python_blocks(p)], ids=lambda p: p.name)
def test_every_import_in_a_python_block_imports(page):
    imports = [line.split("#")[0].strip() for block in _python_blocks(page) for line in block.splitlines()
               if re.match(r"(from \S+ import \S|import \S)", line)]
    assert imports, page
    result = subprocess.run([sys.executable, "-c", "\n".join(imports)], capture_output=True, text=True, timeout=120,
                            cwd="/")  # not the checkout: a reader's script runs anywhere
    assert result.returncode == 0, result.stderr


def test_the_report_module_names_itself_in_its_usage():
    result = subprocess.run([sys.executable, "-m", "fauxka.pipeline", "--help"], capture_output=True, text=True,
                            timeout=120, cwd="/")
    assert result.returncode == 0 and result.stdout.startswith("usage: python -m fauxka.pipeline "), result.stdout


def test_no_link_to_another_page_says_below_or_above():
    """A link into another page is neither below nor above (docs/using.md said "see docker compose below")."""
    stale = [(p.name, m.group(0)) for p in PAGES
             for m in re.finditer(r"\]\((?!#)[^)]+\)\s+(below|above)\b", p.read_text())]
    assert stale == []


def test_the_compose_file_points_at_a_page_that_exists():
    header = (ROOT / "docker-compose.yml").read_text().splitlines()[0]
    pages = re.findall(r"(docs/[\w-]+\.md|README\.md)", header)
    assert pages and all((ROOT / p).exists() for p in pages), header
    assert "'docker compose'" not in header  # the README has no such section: docs/compose.md has
