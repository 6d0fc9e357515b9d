"""How long a forwarding broker may wait on its own cache after the controller answered."""

import datetime
import time
from types import SimpleNamespace

import pytest

from fauxka.broker.handlers.admin_common import forwarded_wait_s


def _ctx(request_timeout_ms: int):
    return SimpleNamespace(config={"request.timeout.ms": request_timeout_ms})


def _request(timeout_ms: int):
    return SimpleNamespace(timeout=datetime.timedelta(milliseconds=timeout_ms))


def test_what_is_left_of_the_requests_own_timeout_counts_from_receipt():
    received = time.monotonic() - 4.0
    assert forwarded_wait_s(_ctx(30000), _request(5000), received) == pytest.approx(1.0, abs=0.2)


def test_request_timeout_ms_bounds_it_when_shorter():
    """The controller may have answered only after retries; the client must not wait on past
    request.timeout.ms for the forwarder's cache (it would time the request out itself)."""
    received = time.monotonic() - 7.0
    assert forwarded_wait_s(_ctx(8000), _request(30000), received) == pytest.approx(1.0, abs=0.2)
    assert forwarded_wait_s(_ctx(8000), _request(5000), received) < 0
