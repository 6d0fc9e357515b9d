"""The wire layer: the only package of fauxka that knows Kafka's bytes."""
