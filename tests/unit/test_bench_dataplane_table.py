"""bench/dataplane_table.py: medians, ratios, n/a, targets and the README section."""

from bench import dataplane_table as dt


def _round(fauxka: dict, tansu: dict) -> dict:
    return {"fauxka": fauxka, "tansu": tansu}


def test_medians_and_ratio_of_the_rounds_ratios():
    rounds = [_round({"produce_100_1": 100.0}, {"produce_100_1": 200.0}),
              _round({"produce_100_1": 300.0}, {"produce_100_1": 300.0}),
              _round({"produce_100_1": 50.0}, {"produce_100_1": 1000.0})]
    medians, ratios = dt.aggregate(rounds)
    assert medians["fauxka"]["produce_100_1"] == 100.0
    assert medians["tansu"]["produce_100_1"] == 300.0
    # the ratios are 0.5, 1.0, 0.05: their median, not 100 / 300
    assert ratios["produce_100_1"] == 0.5


def test_a_reason_wins_over_numbers_and_gives_no_ratio():
    rounds = [_round({"consume_100": "no Fetch"}, {"consume_100": 10.0}),
              _round({"consume_100": "no Fetch"}, {"consume_100": 20.0})]
    medians, ratios = dt.aggregate(rounds)
    assert medians["fauxka"]["consume_100"] == "no Fetch"
    assert medians["tansu"]["consume_100"] == 15.0
    assert "consume_100" not in ratios


def test_a_key_measured_in_one_round_only():
    rounds = [_round({"failover_s": 7.0}, {"failover_s": "1 node"}), _round({}, {})]
    medians, _ = dt.aggregate(rounds)
    assert medians["fauxka"]["failover_s"] == 7.0
    assert medians["tansu"]["failover_s"] == "1 node"


def _by_measure(medians, ratios, session_s=6.0):
    return {row[0]: row for row in dt.rows(medians, ratios, session_s)}


def test_rows_show_rates_in_records_and_megabytes_and_mark_targets():
    medians = {"fauxka": {"produce_100_1": 600_000.0, "produce_100_all": 250_000.0, "consume_100": 1_200_000.0,
                          "produce_p50": 0.8, "produce_p99": 2.5, "rss_mb": 151.0, "failover_s": 7.0},
               "tansu": {"produce_100_1": 700_000.0, "produce_100_all": "1 node", "consume_100": 600_000.0,
                         "produce_p50": 0.4, "produce_p99": 1.0, "rss_mb": 50.0, "failover_s": "1 node"}}
    ratios = {"produce_100_1": 0.857, "consume_100": 2.0, "produce_p50": 2.0, "produce_p99": 2.5, "rss_mb": 3.02}
    rows = _by_measure(medians, ratios)
    produce = rows["produce 100 B, acks=1 RF1"]
    assert produce[1] == "600,000 rec/s (60.0 MB/s)"
    assert produce[3] == "0.86x"
    assert produce[4].endswith(": met")
    # 250,000 is below half of 600,000
    assert rows["produce 100 B, acks=all RF3"][4].endswith(": missed")
    assert rows["produce 100 B, acks=all RF3"][2] == "n/a (1 node)"
    assert rows["consume 100 B (RF1)"][4].endswith(": met")
    latency = rows["produce latency p50 / p99 (100 B, acks=1, linger 0)"]
    assert latency[1:4] == ("0.80 / 2.50 ms", "0.40 / 1.00 ms", "2.00x / 2.50x")
    assert latency[4] == "p50 < 1 ms: met; p50 <= 1x Tansu (issue 25): missed"
    assert rows["broker RSS while serving the load (max)"][4] == "< 150 MB: missed"
    failover = rows["failover: leader SIGKILLed to first acks=all produce (session 6 s)"]
    assert failover[1:3] == ("7.00 s", "n/a (1 node)")
    assert failover[4] == "<= 7 s (session + 1 s): met"


def test_a_small_ratio_keeps_two_significant_digits():
    medians = {"fauxka": {"e2e_p50": 0.5, "e2e_p99": 5.0}, "tansu": {"e2e_p50": 250.0, "e2e_p99": 280.0}}
    rows = _by_measure(medians, {"e2e_p50": 0.002, "e2e_p99": 0.0179})
    assert rows["produce-to-consume latency p50 / p99"][3] == "0.002x / 0.018x"


def test_produce_target_needs_the_tansu_share_too():
    medians = {"fauxka": {"produce_100_1": 600_000.0}, "tansu": {"produce_100_1": 1_000_000.0}}
    rows = _by_measure(medians, {"produce_100_1": 0.6})
    assert rows["produce 100 B, acks=1 RF1"][4].endswith(": missed")


def test_a_side_without_produce_says_why_and_marks_nothing():
    medians = {"fauxka": {k: "no Produce" for k in ("produce_100_1", "consume_100", "produce_p50", "produce_p99",
                                                    "rss_mb")},
               "tansu": {"produce_100_1": 900_000.0, "produce_p50": 0.3, "produce_p99": 0.9}}
    rows = _by_measure(medians, {})
    produce = rows["produce 100 B, acks=1 RF1"]
    assert produce[1:4] == ("n/a (no Produce)", "900,000 rec/s (90.0 MB/s)", "")
    assert not produce[4].endswith(("met", "missed"))
    assert rows["produce latency p50 / p99 (100 B, acks=1, linger 0)"][1] == "n/a (no Produce)"
    assert rows["broker RSS while serving the load (max)"][1] == "n/a (no Produce)"


def test_markdown_has_one_line_per_row_under_a_header():
    lines = dt.markdown([("a", "b", "c", "d", "e")])
    assert lines == ["| measure | fauxka | Tansu | fauxka / Tansu | target |", "|---|---|---|---|---|",
                     "| a | b | c | d | e |"]


def test_splice_replaces_the_section_and_keeps_the_rest():
    section = f"{dt.SECTION}\n\nnew table\n"
    readme = "# fauxka benchmarks\n\nadmin table\n"
    once = dt.splice(readme, section)
    assert once == f"# fauxka benchmarks\n\nadmin table\n\n{dt.SECTION}\n\nnew table\n"
    twice = dt.splice(once.replace("new table", "old table"), section)
    assert twice == once
    assert dt.splice("", section) == section


def test_the_brokers_part_of_a_failover_has_its_own_row_when_measured():
    medians = {"fauxka": {"failover_s": 7.4, "failover_broker_s": 6.3}, "tansu": {"failover_s": "1 node",
                                                                              "failover_broker_s": "1 node"}}
    rows = _by_measure(medians, {})
    part = rows["  of which the brokers': kill to a surviving broker's Metadata naming the new leader"]
    assert part[1:3] == ("6.30 s", "n/a (1 node)")
    assert not any(row[0].startswith("  of which") for row in _by_measure({"fauxka": {"failover_s": 7.0},
                                                                          "tansu": {}}, {}).values())


def test_hand_run_sections_are_kept_verbatim_and_the_rest_left_out():
    readme = (f"# fauxka benchmarks\n\n| generated |\n\n## Groups (hand-run, not yet regenerated)\n\nrow a\n\n"
              f"## Generated part\n\nrow b\n\n## Issue 25 (hand-run)\n\n| x |\n\n{dt.SECTION}\n\n## Late (hand-run)\n")
    assert dt.hand_run_sections(readme) == (
        "## Groups (hand-run, not yet regenerated)\n\nrow a\n\n## Issue 25 (hand-run)\n\n| x |")
    assert dt.hand_run_sections("# fauxka benchmarks\n\n| generated |\n") == ""
