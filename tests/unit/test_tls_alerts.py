"""The alert a broker sends a client that gave no certificate where one is required: JSSE's
bad_certificate in a plaintext TLS 1.0-1.2 record, anything else untouched (fauxka/broker/tls/stream.py)."""

from fauxka.broker.tls.stream import _as_jsse

HANDSHAKE_FAILURE_TLS12 = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 40])


def test_a_plaintext_fatal_alert_becomes_bad_certificate():
    assert _as_jsse(HANDSHAKE_FAILURE_TLS12) == bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 42])
    tls10 = bytes([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 40])
    assert _as_jsse(tls10)[-1] == 42


def test_an_encrypted_record_a_warning_or_nothing_is_left_as_it_is():
    encrypted = bytes([0x17, 0x03, 0x03, 0x00, 0x13]) + bytes(19)  # TLS 1.3: certificate_required inside
    warning = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x01, 0])
    for pending in (encrypted, warning, b""):
        assert _as_jsse(pending) == pending
