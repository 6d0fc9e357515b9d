"""Multi-op (ZooKeeper transaction) operations and their failure, as plain data."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a multi-op (ZooKeeper transaction)."""

    kind: str  # create | set | delete | check
    path: str
    data: bytes = b""
    version: int = -1
    ephemeral: bool = False
    sequence: bool = False

    @staticmethod
    def create(path: str, data: bytes = b"", ephemeral: bool = False, sequence: bool = False) -> "Op":
        return Op("create", path, data, ephemeral=ephemeral, sequence=sequence)

    @staticmethod
    def set(path: str, data: bytes, version: int = -1) -> "Op":
        return Op("set", path, data, version)

    @staticmethod
    def delete(path: str, version: int = -1) -> "Op":
        return Op("delete", path, version=version)

    @staticmethod
    def check(path: str, version: int) -> "Op":
        return Op("check", path, version=version)


class MultiFailed(Exception):
    """A multi-op was rolled back; `cause` is the failure of operation `index`."""

    def __init__(self, index: int, cause: BaseException):
        super().__init__(f"multi-op failed at operation {index}: {cause!r}")
        self.index, self.cause = index, cause
