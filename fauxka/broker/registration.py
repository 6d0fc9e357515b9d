"""This broker's ephemeral /brokers/ids/<id> registration, and its id when broker.id is -1."""

from fauxka.storage.log_manager import stored_broker_id
from fauxka.zkstore import NoNode, NodeExists, ZkStore
from fauxka.zkstore import paths as zp


class BrokerIdTaken(Exception):
    pass


async def register(zk: ZkStore, registration: zp.BrokerRegistration) -> None:
    """Create the ephemeral node; an id held by another session is fatal, as in Kafka."""
    path = zp.broker_path(registration.broker_id)
    try:
        await zk.create(path, zp.encode_broker(registration), ephemeral=True)
    except NodeExists:
        existing = await zk.get(path)
        if existing is not None and existing[1].ephemeral_owner == zk.session_id:
            return  # our own node, from before a reconnect
        owner = existing[1].ephemeral_owner if existing else "?"
        raise BrokerIdTaken(
            f"Error while creating ephemeral at {path}, node already exists and owner '{owner}' does not "
            f"match current session '{zk.session_id}': broker.id {registration.broker_id} is already "
            "registered by another broker"
        ) from None


class NoBrokerId(Exception):
    pass


async def resolve_broker_id(config, log):
    """KafkaServer.getOrGenerateBrokerId: broker.id as configured; for -1 the one in log.dirs'
    meta.properties (written at the first start), else reserved.broker.max.id + the new data
    version of /brokers/seqid (KafkaZkClient.generateBrokerSequenceId). The config with the id."""
    if config.broker_id >= 0:
        return config
    stored = stored_broker_id(config["log.dirs"])
    if stored is not None:
        return config.with_broker_id(stored)
    if not config["broker.id.generation.enable"]:
        raise NoBrokerId("No broker ID found, and broker.id.generation.enable is disabled.")
    zk = ZkStore(config["zookeeper.connect"], config["zookeeper.session.timeout.ms"], log)
    await zk.start(config["zookeeper.connection.timeout.ms"] / 1000)
    try:
        try:
            stat = await zk.set(zp.BROKER_SEQUENCE_ID, b"")
        except NoNode:
            await zk.ensure_path(zp.BROKER_SEQUENCE_ID)
            stat = await zk.set(zp.BROKER_SEQUENCE_ID, b"")
    finally:
        await zk.stop()
    return config.with_broker_id(stat.version + config["reserved.broker.max.id"])
