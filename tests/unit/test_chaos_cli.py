"""`fauxka chaos`'s bad input: one line on stderr, exit code 2, before any cluster is touched."""

import pytest

from fauxka.cli import main


@pytest.mark.parametrize("argv, message", [
    (["--nemesis", "kill,meteor"], "fauxka chaos: unknown nemesis meteor; one of: kill, pause, restart, link, "
                                    "zookeeper, replication, storage, leader, coordinator"),
    (["--workload", "produce,bank"], "fauxka chaos: unknown workload bank; one of: produce, txn, group"),
    (["--max-down", "2"], "fauxka chaos: --max-down 2 would take down more brokers than the cluster survives: "
                          "with 3 broker(s), replication factor 3 and min.insync.replicas 2, at most 1 may be out at once"),
    (["--brokers", "1", "--nemesis", "kill"], "fauxka chaos: kill take a broker down, but with 1 broker(s), "
                                              "replication factor 1 and min.insync.replicas 1 none may be out"),
    (["--bootstrap", "127.0.0.1:9"], "fauxka chaos: give --bootstrap and --zookeeper together"),
])
def test_bad_input_is_one_line(argv, message, tmp_path, capsys):
    assert main(["chaos", "--data-dir", str(tmp_path / "none"), "--out", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_an_unreachable_cluster_is_one_line(tmp_path, capsys):
    assert main(["chaos", "--bootstrap", "127.0.0.1:9", "--zookeeper", "127.0.0.1:9", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fauxka chaos: no ZooKeeper answers at 127.0.0.1:9") and err.count("\n") == 1, err


def test_a_duration_is_read_as_a_person_writes_it():
    from fauxka.chaos_cli import duration

    assert (duration("90"), duration("60s"), duration("5m"), duration("1h")) == (90, 60, 300, 3600)
    with pytest.raises(Exception, match="a duration like"):
        duration("soon")
