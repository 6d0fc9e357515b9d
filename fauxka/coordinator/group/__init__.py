"""The classic group protocol (Kafka 3.x GroupCoordinator / GroupMetadataManager), socket-free."""
