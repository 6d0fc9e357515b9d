"""The fauxka-kafka source's options (fauxka/pipeline/kafka_options.py), checked as Spark's connector does."""

import pytest

from fauxka.pipeline.kafka_options import EARLIEST, LATEST, OptionError, rate_limit, source_options

BASE = {"kafka.bootstrap.servers": "h:9092", "subscribe": "a,b"}


def test_defaults_and_pass_through():
    batch = source_options(BASE, streaming=False)
    assert (batch.starting, batch.ending, batch.fail_on_data_loss, batch.include_headers) == ("earliest", "latest", True, False)
    assert batch.subscription.topics == ("a", "b")
    stream = source_options({**BASE, "kafka.security.protocol": "SSL", "maxOffsetsPerTrigger": "10",
                             "FailOnDataLoss": "false", "groupIdPrefix": "x"}, streaming=True)
    assert stream.starting == "latest" and stream.max_offsets_per_trigger == 10 and not stream.fail_on_data_loss
    assert stream.client == {"bootstrap.servers": "h:9092", "security.protocol": "SSL"}


def test_offsets_json():
    o = source_options({**BASE, "startingOffsets": '{"a":{"0":5,"1":-2}}', "endingOffsets": '{"a":{"0":-1}}'},
                       streaming=False)
    assert o.starting == {"a": {0: 5, 1: EARLIEST}} and o.ending == {"a": {0: LATEST}}
    assigned = source_options({"kafka.bootstrap.servers": "h", "assign": '{"t":[0,2]}'}, streaming=True)
    assert assigned.subscription.assigned == (("t", 0), ("t", 2)) and assigned.subscription.matches("t")
    pattern = source_options({"kafka.bootstrap.servers": "h", "subscribePattern": "au.*"}, streaming=True)
    assert pattern.subscription.matches("audit") and not pattern.subscription.matches("xaudit")


@pytest.mark.parametrize("options, named", [
    ({"startingOffsetz": "earliest"}, "startingoffsetz"),
    ({"startingOffsets": "{nope"}, "startingOffsets"),
    ({"endingOffsets": '{"a":{"0":-2}}'}, "endingOffsets"),
    ({"startingOffsets": "latest"}, "startingOffsets"),
    ({"assign": '{"a":[0]}'}, "Exactly one"),
    ({"kafka.auto.offset.reset": "earliest"}, "auto.offset.reset"),
    ({"includeHeaders": "yes"}, "includeHeaders"),
    ({"endingTimestamp": "soon"}, "endingTimestamp"),
    ({"endingOffsetsByTimestamp": '{"a":{"0":"x"}}'}, "endingOffsetsByTimestamp"),
    ({"startingOffsetsByTimestamp": '{"a":{"0":5,"1":5}}', "endingOffsetsByTimestamp": '{"a":{"0":9}}'},
     "same partitions"),
    ({"startingOffsetsByTimestamp": '{"a":{"0":9}}', "endingOffsetsByTimestamp": '{"a":{"0":5}}'}, "a-0.*after"),
    ({"kafka.bootstrap.servers": ""}, "kafka.bootstrap.servers"),
])
def test_bad_options_name_themselves(options, named):
    with pytest.raises(OptionError, match=named):
        source_options({**BASE, **options}, streaming=False)


@pytest.mark.parametrize("name, value", [("endingOffsets", "latest"), ("endingTimestamp", "5"),
                                         ("endingOffsetsByTimestamp", '{"a":{"0":5}}')])
def test_ending_offsets_are_for_batch_only(name, value):
    with pytest.raises(OptionError, match=f"{name}.*batch queries only"):
        source_options({**BASE, name: value}, streaming=True)


def test_ending_by_timestamp_for_batch():
    o = source_options({**BASE, "startingOffsetsByTimestamp": '{"a":{"0":5}}',
                        "endingOffsetsByTimestamp": '{"a":{"0":9}}', "endingTimestamp": "7"}, streaming=False)
    assert (o.starting_by_timestamp, o.ending_by_timestamp, o.ending_timestamp) == ({"a": {0: 5}}, {"a": {0: 9}}, 7)


def test_rate_limit_shares_in_proportion_to_what_waits():
    start = {"t": {"0": 0, "1": 10}}
    latest = {"t": {"0": 100, "1": 40}, "u": {"0": 20}}
    end = rate_limit(start, latest, 50)
    assert end == {"t": {"0": 33, "1": 20}, "u": {"0": 6}}
    assert rate_limit(start, latest, 1000) == latest
    assert rate_limit({"t": {"0": 0}}, {"t": {"0": 3}, "u": {"0": 3}}, 1) == {"t": {"0": 1}, "u": {"0": 0}}
