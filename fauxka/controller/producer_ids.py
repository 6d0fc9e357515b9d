"""Producer id blocks (AllocateProducerIds, KIP-730) from /latest_producer_id_block.

Source (Kafka 3.9): ZkProducerIdManager.getNewProducerIdBlock: read the znode (empty at first),
the next block starts after the last block_end, is PRODUCER_ID_BLOCK_SIZE ids long, and is
written with a conditional set at the version read; a lost race reads again. fauxka also fences
the write on /controller_epoch like every controller write, so only the controller hands out ids.
"""

from dataclasses import dataclass

from fauxka.model.errors import ControllerMoved, ErrorCode, KafkaError
from fauxka.zkstore import BadVersion, MultiFailed, ZkStore
from fauxka.zkstore import paths as zp
from fauxka.zkstore.fenced import FencedWriter
from fauxka.zkstore.store import Op

from .election import ControllerElection

ATTEMPTS = 10
MAX_PRODUCER_ID = 2**63 - 1


def next_block(last: zp.ProducerIdBlock | None, broker_id: int) -> zp.ProducerIdBlock:
    """The block after `last` (the first block starts at 0)."""
    start = 0 if last is None else last.block_end + 1
    if start > MAX_PRODUCER_ID - zp.PRODUCER_ID_BLOCK_SIZE:
        raise KafkaError(ErrorCode.unknown_server_error, "Have exhausted all producerIds.")
    return zp.ProducerIdBlock(broker_id, start, start + zp.PRODUCER_ID_BLOCK_SIZE - 1)


@dataclass(eq=False)
class ProducerIdBlocks:
    """The controller's /latest_producer_id_block: read, and written behind the controller fence."""

    zk: ZkStore
    writer: FencedWriter
    election: ControllerElection

    async def allocate(self, broker_id: int) -> zp.ProducerIdBlock:
        """A new block for `broker_id`. A write that found the controller moved resigns, then raises
        ControllerMoved; ZooKeeper unavailable raises ZkUnavailable (a StoreUnavailable)."""
        try:
            return await self._allocate(broker_id)
        except ControllerMoved as exc:
            self.election.resign(str(exc))
            raise

    async def _allocate(self, broker_id: int) -> zp.ProducerIdBlock:
        for _ in range(ATTEMPTS):
            current = await self.zk.get(zp.LATEST_PRODUCER_ID_BLOCK)
            if current is None:
                op_version, last = -1, None
                ops = [Op.create(zp.LATEST_PRODUCER_ID_BLOCK)]
            else:
                op_version, last, ops = current[1].version, zp.decode_producer_id_block(current[0]), []
            block = next_block(last, broker_id)
            expected = 0 if ops else op_version
            try:
                await self.writer.write([*ops, Op.set(zp.LATEST_PRODUCER_ID_BLOCK,
                                                      zp.encode_producer_id_block(block), expected)])
            except MultiFailed as failed:
                if isinstance(failed.cause, BadVersion) or ops:
                    continue  # another allocation won the race: read again
                raise
            return block
        raise KafkaError(ErrorCode.unknown_server_error, "producer id block allocation kept losing races")
