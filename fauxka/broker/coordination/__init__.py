"""The coordination roles this broker holds, wired to the data plane: group_role.py (the group
coordinator while it leads __consumer_offsets partitions) and txn_role.py (the transaction
coordinator while it leads __transaction_state ones), side by side; replica_host.py (the replica
manager as the coordinators' PartitionHost), txn_markers.py, producer_ids.py and their metrics."""
