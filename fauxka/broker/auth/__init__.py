"""Authentication (SASL) and authorization (ACLs) of client connections."""
