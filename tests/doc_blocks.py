"""The code blocks of README.md and docs/: each is run by a test or marked why not, by an HTML comment
on the line above its fence:

    <!-- doc-block: run NAME -->         tests/integration/test_doc_blocks.py runs it (by NAME)
    <!-- doc-block: synopsis -->         a command's synopsis: every `--flag` of a fauxka command in it
                                         is checked against the command's --help
    <!-- doc-block: config -->           broker properties: loaded by fauxka's config loader
    <!-- doc-block: not run: REASON -->  why not (a test elsewhere, another machine, a placeholder)
"""

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = ("sh", "python", "properties")


@dataclass
class Block:
    page: Path
    line: int
    language: str
    marker: str | None
    text: str

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line} ({self.language})"


def blocks() -> list[Block]:
    out = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        i = 0
        while i < len(lines):
            fence = re.fullmatch(r"\s*```(\w+)\s*", lines[i])
            if fence:
                end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
                above = re.fullmatch(r"\s*<!-- doc-block: (.+?) -->\s*", lines[i - 1]) if i else None
                if fence.group(1) in LANGUAGES:
                    out.append(Block(page, i + 1, fence.group(1), above.group(1) if above else None,
                                     "\n".join(line[len(lines[i]) - len(lines[i].lstrip()):] for line in lines[i + 1:end])))
                i = end
            i += 1
    return out


def block(name: str) -> Block:
    [found] = [b for b in blocks() if b.marker == f"run {name}"]
    return found
