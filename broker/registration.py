"""This broker's ephemeral /brokers/ids/<id> registration."""

from zkstore import NodeExists, ZkStore
from zkstore import paths as zp


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
