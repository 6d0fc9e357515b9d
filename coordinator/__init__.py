"""The coordinator role: what a broker does while it leads a __consumer_offsets partition.

runtime.py loads a partition by replaying its log and unloads it on losing leadership;
group/ is the socket-free classic group protocol (Kafka's group-coordinator module).
"""
