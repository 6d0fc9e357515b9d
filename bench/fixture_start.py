"""The pytest plugin's start-up, as a user's session sees it (issue 14: "the fixture starts in
well under a second against a ZooKeeper that stays up for the session").

    /usr/bin/time -v .venv/bin/python -m pytest -q -p no:cacheprovider --durations=0 bench/fixture_start.py

test_zookeeper's setup is the session's ZooKeeper (and, since the starter, the pre-forked
interpreter importing meanwhile); test_cluster's setup is the `fauxka_cluster` fixture starting
3 brokers against it; test_private_cluster's call is a `fauxka_cluster_factory` cluster. The
figures are pytest's --durations lines. Run against an older checkout with PYTHONPATH=<its root>.
"""


def test_zookeeper(fauxka_zookeeper):
    assert fauxka_zookeeper


def test_cluster(fauxka_cluster):
    assert fauxka_cluster.controller() in fauxka_cluster.broker_ids


def test_private_cluster(fauxka_cluster_factory):
    cluster = fauxka_cluster_factory(brokers=3)
    assert cluster.controller() in cluster.broker_ids
