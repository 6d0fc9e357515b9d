"""The coordinators, socket-free: what a broker does while it leads a __consumer_offsets partition
(group/) or a __transaction_state one (txn/).

Both stand on one coordinator runtime (runtime.py, one instance per internal topic) that loads a
partition by replaying its log, unloads it on losing leadership, owns the coordinator's tasks and
appends its records (batches.py) through the data plane's one partition writer (partition_writer.py).
"""
