"""A port a broker cannot bind is named with what wanted it and the process holding it."""

import os
import socket

import pytest

from fauxka.broker.metrics import BrokerMetrics
from fauxka.ports import free_ports


def test_a_taken_metrics_port_names_itself_and_its_holder():
    port = free_ports()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        metrics = BrokerMetrics()
        with pytest.raises(OSError) as raised:
            metrics.serve("127.0.0.1", port)
    message = str(raised.value)
    assert f"metrics.port cannot bind 127.0.0.1:{port}: address already in use" in message, message
    assert f"held by pid {os.getpid()}" in message, message
