"""The forwarding manager (KIP-590): a non-controller wraps a forwardable request,
exactly as the client sent it, in an EnvelopeRequest to the controller.

One pipelined connection to the current controller serves every client, so
clients never wait behind each other. ErrorCode.not_controller or a lost connection:
forget the channel, wait for the metadata cache to name the controller again
(or a short backoff), retry, until request.timeout.ms after receipt; then the
client gets its api's own ErrorCode.request_timed_out response.
"""

import asyncio
import functools
import ipaddress
import time
from typing import Any, Callable

from fauxka.model.errors import ErrorCode

from .controller_link import CLIENT_ID_PREFIX, ControllerLink
from .metrics import BrokerMetrics
from .protocol.api_table import Api
from .protocol.build import build
from .protocol.codec import Request, RequestParseError, decode_response, request_schema
from .protocol.principal import serialize_principal

__all__ = ["CLIENT_ID_PREFIX", "ForwardingManager"]


@functools.lru_cache(maxsize=1024)
def _packed(host: str) -> bytes:
    return ipaddress.ip_address(host).packed


class ForwardingManager:
    def __init__(self, link: ControllerLink, request_timeout_ms: int, metrics: BrokerMetrics,
                 is_controller: Callable[[], bool], handler: Callable[[Api], Any],
                 error_response: Callable[[Request, int], Any]):
        """`handler`: an api's handler (fauxka/broker/handlers/table.py), for a request this broker answers
        itself after all (it became the controller) and for the handler's `after_forward`;
        `error_response`: the api's answer carrying one error code. Both given, not imported: the
        handlers' context carries this manager."""
        self._link = link
        self._timeout_s = request_timeout_ms / 1000
        self._metrics = metrics
        self._is_controller = is_controller
        self._handler = handler
        self._error_response = error_response

    async def stop(self) -> None:
        pass  # the connection belongs to the controller link

    async def forward(self, ctx) -> Any:
        """The client's response: the controller's inner response bytes, or an error response entity."""
        request, metrics = ctx.request, self._metrics
        received = time.monotonic()
        deadline = received + self._timeout_s
        envelope = build(request_schema(58, 0), {
            "request_data": request.frame,
            "request_principal": serialize_principal(ctx.principal),
            "client_host_address": _packed(ctx.client_host),
        })
        metrics.child(metrics.forwarded, request.api.name).inc()
        metrics.forwarding_pending.inc()
        try:
            while True:
                if self._is_controller():  # became controller meanwhile: answer here
                    return await self._handler(request.api).handle(ctx, request.body)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    metrics.forwarding_timeouts.labels(request.api.name).inc()
                    return self._error_response(request, ErrorCode.request_timed_out)
                metrics.server.forward_queue_length += 1
                try:
                    channel = await self._link.connection(remaining)
                finally:
                    metrics.server.forward_queue_length -= 1
                if channel is None:
                    await self._retry_later("no_controller", deadline)
                    continue
                sent = time.monotonic()
                metrics.server.forward_queue_ms.update((sent - received) * 1000)  # KIP-938 QueueTimeMs
                try:
                    response = await channel.send(envelope, max(deadline - sent, 0.001))
                except (ConnectionError, OSError, asyncio.TimeoutError, RequestParseError):
                    await self._link.drop(channel)
                    await self._retry_later("disconnect", deadline)
                    continue
                metrics.server.forward_remote_ms.update((time.monotonic() - sent) * 1000)  # RemoteTimeMs
                outcome = self._outcome(ctx, response)
                if isinstance(outcome, tuple):  # the controller's answer
                    data, answer = outcome
                    after_forward = self._handler(request.api).after_forward
                    if after_forward is not None:
                        await after_forward(ctx, request.body, answer, received)
                    return data
                if outcome is not None:
                    return outcome
                await self._link.drop(channel)
                await self._retry_later("not_controller", deadline)
        finally:
            metrics.forwarding_pending.dec()

    def _outcome(self, ctx, response: Any) -> Any:
        """What the client gets for the controller's answer: (its bytes, it decoded), an error
        response, or None to retry (ErrorCode.not_controller)."""
        code = int(response.error_code)
        if code == ErrorCode.not_controller:
            return None
        if code == ErrorCode.unsupported_version:
            raise RequestParseError("the controller cannot parse this request version: closing the client")
        if code == ErrorCode.cluster_authorization_failed:
            self._metrics.forwarding_auth_failures.inc()
        if code != ErrorCode.none or response.response_data is None:
            ctx.log.warning("forwarded request failed at the controller", error=code)
            return self._error_response(ctx.request, ErrorCode.unknown_server_error)
        try:
            _, answer = decode_response(response.response_data, request_schema(ctx.api_key, ctx.version))
        except RequestParseError as exc:
            ctx.log.warning("unparsable forwarded response", error=str(exc))
            return self._error_response(ctx.request, ErrorCode.unknown_server_error)
        return response.response_data, answer  # the controller's answer, with the client's correlation id

    async def _retry_later(self, reason: str, deadline: float) -> None:
        self._metrics.forwarding_retries.labels(reason).inc()
        await self._link.wait_for_news(deadline)
