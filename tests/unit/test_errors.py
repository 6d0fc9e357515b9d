"""fauxka/model/errors.py: one exception over kio's ErrorCode."""

from fauxka.model.errors import ErrorCode, KafkaError


def test_kafka_error_carries_the_code_and_kafkas_message():
    error = KafkaError(ErrorCode.not_leader_or_follower, "This is not the leader")
    assert error.code == 6 and error.code.retriable
    assert error.message == "This is not the leader"
    assert KafkaError(ErrorCode.corrupt_message).message is None
    assert str(KafkaError(ErrorCode.corrupt_message)) == "corrupt_message"
