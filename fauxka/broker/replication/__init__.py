"""The replicas this broker holds: leader and follower roles, appends, reads, replication."""
