"""What the group coordinator writes through: its records appended with acks=all to the group's
__consumer_offsets partition (fauxka/coordinator/group/runtime.py on a broker; a list in unit tests)."""

from typing import Protocol

from fauxka.model.errors import ErrorCode


class GroupLog(Protocol):
    async def write_records(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append key/value records (None value: tombstone) to the group's partition with acks=all.
        (Named apart from `list.append`, which the coordinator calls too, so its writes can be found.)"""

    async def write_txn_records(self, group_id: str, records: list[tuple[bytes, bytes | None]], producer_id: int,
                                epoch: int) -> ErrorCode:
        """TxnOffsetCommit's records as one transactional batch of that producer (acks=all)."""
