"""TLS for SSL and SASL_SSL listeners and the broker's own connections (keystores, contexts, handshakes)."""
