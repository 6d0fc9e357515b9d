"""Authorization seam: handlers ask `broker.authorizer.authorize(...)`.

Without `authorizer.class.name` every request is allowed, as in Kafka.
"""


class AllowAll:
    def authorize(self, principal: str, host: str, operation: str, resource_type: str, name: str) -> bool:
        return True

    def close(self) -> None:
        pass
