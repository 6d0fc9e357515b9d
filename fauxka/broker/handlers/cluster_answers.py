"""What several apis answer about the cluster as the request's listener sees it: the live brokers
(Metadata, DescribeCluster, FindCoordinator v4+), the leaders' endpoints in current-leader hints
(KIP-951: Produce v10+, Fetch v16+), the Cluster's authorized operations (Metadata v8-v10,
DescribeCluster)."""

from fauxka.model.acl_model import CLUSTER_NAME

from ..context import RequestContext

AUTHORIZED_OPERATIONS_OMITTED = -2147483648  # the schema's default: not asked for


def listener_brokers(ctx: RequestContext) -> list[dict]:
    """Live brokers with an endpoint on the listener the request came in on."""
    brokers = []
    for broker_id, reg in sorted(ctx.cache.brokers.items()):
        endpoint = reg.endpoint(ctx.listener)
        if endpoint is not None:
            brokers.append({"node_id": broker_id, "host": endpoint.host, "port": endpoint.port, "rack": reg.rack})
    return brokers


def node_endpoints(ctx: RequestContext, broker_ids) -> list[dict]:
    """KIP-951: the listener's endpoints of the leaders named in current_leader hints."""
    endpoints = []
    for broker_id in sorted(broker_ids):
        registration = ctx.cache.brokers.get(broker_id)
        endpoint = registration.endpoint(ctx.listener) if registration else None
        if endpoint is not None:
            endpoints.append({"node_id": broker_id, "host": endpoint.host, "port": endpoint.port,
                              "rack": registration.rack})
    return endpoints


def cluster_operations(ctx: RequestContext, include: bool) -> int:
    """The Cluster's authorized operations when asked for: 0 without Describe on the Cluster."""
    if not include:
        return AUTHORIZED_OPERATIONS_OMITTED
    if not ctx.authorized("DESCRIBE", "CLUSTER", CLUSTER_NAME):
        return 0
    return ctx.authorized_operations("CLUSTER", CLUSTER_NAME)
