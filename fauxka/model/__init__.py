"""Socket-free rules shared by the broker and the controller (no kazoo, no files, no sockets)."""
