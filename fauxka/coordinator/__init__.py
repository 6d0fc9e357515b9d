"""The coordinator roles, socket-free: what a broker does while it leads a __consumer_offsets
partition (group/) or a __transaction_state one (txn/).

Each has a runtime (group/runtime.py, txn/runtime.py) that loads a partition by replaying its log
and unloads it on losing leadership, through loads.py, over the data plane's partition_host.py.
"""
