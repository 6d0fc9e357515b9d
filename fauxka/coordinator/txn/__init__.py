"""The transaction coordinator over __transaction_state (Kafka 3.x transaction-coordinator)."""
