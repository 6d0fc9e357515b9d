"""Which files an --audit argument names.

A file is read as it is (a `.gz` file is decompressed by Spark). A directory means every
`audit*` file below it (the brokers write `audit-<id>.log`; rotated or gzipped copies such as
`audit-1.log.1.gz` count too). A glob (`runs/*/audit-*.log*`, `**` allowed) is expanded here, and
each directory it matches is read as a directory. A URL (`hdfs://...`, `s3a://...`) goes to Spark
unchanged, globs included.
"""

import glob
import os
from pathlib import Path

AUDIT_PREFIX = "audit"


class InputError(Exception):
    """An --audit argument that names nothing."""


def resolve(arguments: list[str]) -> list[str]:
    """The files (or URLs) to read, sorted and without duplicates. An existing directory with no
    audit files gives no files (an empty report); a path or glob that matches nothing is an error."""
    found: list[str] = []
    for argument in arguments:
        if "://" in argument and not argument.startswith("file://"):
            found.append(argument)
            continue
        path = argument.removeprefix("file://")
        if os.path.isdir(path):
            found += _audit_files(Path(path))
        elif os.path.isfile(path):
            found.append(os.path.abspath(path))
        elif glob.has_magic(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                raise InputError(f"no file matches {argument}")
            for match in matches:
                if os.path.isdir(match):
                    found += _audit_files(Path(match))
                elif os.path.isfile(match) and not _hidden(Path(Path(match).name)):
                    found.append(os.path.abspath(match))
        else:
            raise InputError(f"no such file or directory: {argument}")
    return sorted(set(found))


def _audit_files(directory: Path) -> list[str]:
    return [str(p.resolve()) for p in sorted(directory.rglob(f"{AUDIT_PREFIX}*"))
            if p.is_file() and not _hidden(p.relative_to(directory))]


def _hidden(path: Path) -> bool:
    return any(part.startswith((".", "_")) for part in path.parts)
