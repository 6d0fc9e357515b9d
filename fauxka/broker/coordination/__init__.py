"""The coordinators this broker runs, wired to the data plane: coordinators.py builds the group and
the transaction coordinator over one coordinator runtime each and one partition writer
(replica_writer.py, over the replica manager) under both; leadership.py loads and unloads their
partitions, txn_markers.py sends the markers, producer_ids.py hands out producer ids; their metrics."""
