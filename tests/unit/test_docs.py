"""The README is the front door and docs/ holds the rest: links that resolve, every page
reachable from the index, every broker key and every module of the core packages named."""

import os
import re
from pathlib import Path

from fauxka.model.broker_keys import BROKER_CONFIGS

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
CORE = ["fauxka"]  # every package of the product lives under it


def _links(path: Path) -> list[Path]:
    text = path.read_text()
    targets = re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", text)
    return [(path.parent / t).resolve() for t in targets if not t.startswith("http")]


def test_readme_is_a_front_door():
    assert len(README.splitlines()) < 250
    assert "make up" in README and "make test" in README
    assert "docs/index.md" in README


def test_every_link_resolves_and_every_page_is_reachable_from_the_index():
    broken = [(str(p.relative_to(ROOT)), str(t)) for p in [ROOT / "README.md", *DOCS.glob("*.md")]
              for t in _links(p) if not t.exists()]
    assert broken == []
    seen, todo = set(), [(DOCS / "index.md").resolve()]
    while todo:
        page = todo.pop()
        if page in seen or page.parent != DOCS.resolve():
            continue
        seen.add(page)
        todo.extend(_links(page))
    unreachable = sorted(p.name for p in DOCS.glob("*.md") if p.resolve() not in seen)
    assert unreachable == []


def test_configuration_page_documents_every_broker_key():
    page = (DOCS / "configuration.md").read_text()
    assert [name for name in BROKER_CONFIGS if f"`{name}`" not in page] == []


def test_architecture_page_names_every_module_of_the_core_packages():
    page = (DOCS / "architecture.md").read_text()
    unnamed = []
    for package in CORE:
        for module in sorted((ROOT / package).rglob("*.py")):
            if module.name in ("__init__.py", "__main__.py"):
                continue
            if not re.search(rf"\b{re.escape(module.stem)}\b", page):
                unnamed.append(str(module.relative_to(ROOT)))
    assert unnamed == []


_PACKAGES = {p.name for p in (ROOT / "fauxka").iterdir() if (p / "__init__.py").exists()}
_PATH_REF = re.compile(r"\bfauxka/[\w/]+\.py\b")
_DOTTED_REF = re.compile(r"`(?:fauxka\.)?((?:%s)(?:\.\w+)+)" % "|".join(sorted(_PACKAGES)))


def _python_files() -> set[str]:
    """Every .py file of the repository, by its path from the root (no virtualenv, no node_modules)."""
    found = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        base = Path(folder).relative_to(ROOT).as_posix()
        found.update(f if base == "." else f"{base}/{f}" for f in files if f.endswith(".py"))
    return found


_FILES = _python_files()
_FILE_REF = re.compile(r"(?<![\w/.-])((?:\w+/)*\w+\.py)\b")  # runtime.py, group/runtime.py
# files of other projects that a page names: librdkafka's test harness (docs/conformance.md)
_OTHER_PROJECTS = {"tests/LibrdkafkaTestApp.py", "interactive_broker_version.py", "cluster_testing.py",
                   "tests/sasl_test.py", "sasl_test.py"}


def _named_modules_missing(text: str) -> list[str]:
    """Module names a text gives that name nothing: fauxka/<path>.py; a file named by itself or by
    the end of its path (`runtime.py`, `group/runtime.py`: some file of the repository ends so);
    and `package.module` (with or without `fauxka.`; the second part a module, a package or a name
    its package defines)."""
    missing = [ref for ref in _PATH_REF.findall(text) if not (ROOT / ref).exists()]
    missing += [ref for ref in _FILE_REF.findall(text) if ref not in _OTHER_PROJECTS
                and not any(f == ref or f.endswith("/" + ref) for f in _FILES)]
    for ref in _DOTTED_REF.findall(text):
        if ref in BROKER_CONFIGS:  # broker.id, controller.socket.timeout.ms: keys, not modules
            continue
        package, name = ref.split(".")[:2]
        if name == "py":  # a file named by itself (`coordinator.py`), not a dotted module
            continue
        base = ROOT / "fauxka" / package
        if (base / f"{name}.py").exists() or (base / name / "__init__.py").exists():
            continue
        if re.search(rf"\b{name}\b", (base / "__init__.py").read_text()):
            continue  # a name the package defines or brings in (`fauxka.chaos.check`)
        missing.append(f"`{ref}`")
    return missing


def test_every_module_a_docstring_or_a_page_names_exists():
    """Names that stay true: a module renamed or moved leaves no docstring or page behind it."""
    texts = [(p, p.read_text()) for p in [ROOT / "README.md", *DOCS.glob("*.md"), *(ROOT / "fauxka").rglob("*.py")]]
    stale = {str(p.relative_to(ROOT)): missing for p, text in texts if (missing := _named_modules_missing(text))}
    assert stale == {}
