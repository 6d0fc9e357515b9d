"""What the delegation token handlers share: KafkaApis.allowTokenRequests, durations, principals.
Their responses' timestamps are int64 milliseconds (broker.protocol.timestamps)."""

import datetime


def allow_token_requests(ctx) -> bool:
    """Not over a token-authenticated connection, nor a PLAINTEXT one (fauxka has no SSL listeners).
    Checked by the receiving broker: a forwarded request was checked by its forwarder."""
    conn = ctx.connection
    if conn is None or conn.token_authenticated:
        return False
    return conn.endpoint.security_protocol not in ("PLAINTEXT", "SSL")


def millis(value: datetime.timedelta) -> int:
    return round(value / datetime.timedelta(milliseconds=1))


def split(principal: str) -> tuple[str, str]:
    """KafkaPrincipal's (type, name) of `Type:Name`."""
    type_, _, name = principal.partition(":")
    return type_, name
