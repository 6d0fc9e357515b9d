"""Topic name rules and collisions (fauxka/model/topic_names.py) against Kafka's Topic.java."""

from fauxka.model.topic_names import (
    colliding_topics,
    has_collision,
    has_collision_chars,
    is_internal,
    java_int_hash,
    java_string_hash,
    scala_set_order,
    unify_collision_chars,
    validate_topic_name,
)

INVALID_CHARS_TAIL = "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"


def test_legal_names():
    for name in ["a", "A-b_c.d", "0", "...", "-", "_", "x" * 249, "__consumer_offsets"]:
        assert validate_topic_name(name) is None, name


def test_messages_since_3_3_2():
    assert validate_topic_name("") == "Topic name is invalid: the empty string is not allowed"
    assert validate_topic_name(".") == "Topic name is invalid: '.' is not allowed"
    assert validate_topic_name("..") == "Topic name is invalid: '..' is not allowed"
    long = "x" * 250
    assert validate_topic_name(long) == (
        f"Topic name is invalid: the length of '{long}' is longer than the max allowed length 249")
    assert validate_topic_name("a b") == f"Topic name is invalid: 'a b' {INVALID_CHARS_TAIL}"
    assert validate_topic_name("café") == f"Topic name is invalid: 'café' {INVALID_CHARS_TAIL}"
    assert validate_topic_name("a/b", kafka_version=(3, 9)) == f"Topic name is invalid: 'a/b' {INVALID_CHARS_TAIL}"


def test_length_is_checked_before_characters():
    long_bad = "!" * 250
    assert "longer than the max allowed length 249" in validate_topic_name(long_bad)


def test_length_counts_utf16_code_units_like_java():
    # 125 emoji are 125 code points but 250 UTF-16 units: Java's length() says too long.
    name = "\U0001F600" * 125
    assert "longer than the max allowed length" in validate_topic_name(name)
    assert INVALID_CHARS_TAIL in validate_topic_name("\U0001F600" * 124)


def test_messages_2_8():
    v = (2, 8, 2)
    assert validate_topic_name("", kafka_version=v) == "Topic name is illegal, it can't be empty"
    assert validate_topic_name(".", kafka_version=v) == 'Topic name cannot be "." or ".."'
    assert validate_topic_name("..", kafka_version=v) == 'Topic name cannot be "." or ".."'
    assert validate_topic_name("y" * 250, kafka_version=v) == (
        "Topic name is illegal, it can't be longer than 249 characters, topic name: " + "y" * 250)
    assert validate_topic_name("a b", kafka_version=v) == (
        "Topic name \"a b\" is illegal, it contains a character other than "
        "ASCII alphanumerics, '.', '_' and '-'")
    assert validate_topic_name("ok", kafka_version=v) is None


def test_messages_3_0_to_3_3_1_capitalise_the_length_label():
    # Topic.validate(name, logPrefix, ...) in 3.0.0-3.3.1 repeats the "Topic name" prefix.
    for v in [(3, 0, 0), (3, 3, 1)]:
        assert validate_topic_name("y" * 250, kafka_version=v) == (
            "Topic name is illegal, it can't be longer than 249 characters, Topic name: " + "y" * 250)
        assert validate_topic_name("", kafka_version=v) == "Topic name is illegal, it can't be empty"


def test_internal_topics():
    assert is_internal("__consumer_offsets")
    assert is_internal("__transaction_state")
    assert not is_internal("__cluster_metadata")
    assert not is_internal("consumer_offsets")


def test_collision_helpers():
    assert has_collision_chars("a.b") and has_collision_chars("a_b")
    assert not has_collision_chars("a-b")
    assert unify_collision_chars("a.b.c_d") == "a_b_c_d"
    assert has_collision("a.b", "a_b")
    assert has_collision("a.b", "a.b")
    assert not has_collision("a.b", "a-b")


def test_colliding_topics_excludes_the_name_and_non_colliders():
    assert colliding_topics("a.b", ["a_b", "a.b", "x", "a-b"]) == ["a_b"]
    assert colliding_topics("a_b", ["a.b"]) == ["a.b"]
    assert colliding_topics("ab", ["ab", "a_b"]) == []  # no '.'/'_' in the name: never checked
    assert colliding_topics("a.b", []) == []


def test_colliding_topics_small_sets_keep_zookeeper_order():
    # Up to 4 topics Scala's Set1..Set4 keep the order getChildren returned.
    assert colliding_topics("a.b_c", ["a_b_c", "a.b.c", "a_b.c"]) == ["a_b_c", "a.b.c", "a_b.c"]
    assert colliding_topics("a.b_c", ["a_b.c", "a.b.c", "a_b_c", "x"]) == ["a_b.c", "a.b.c", "a_b_c"]


def test_colliding_topics_large_sets_follow_scala_hash_order():
    existing = ["zz", "a_b_c", "q", "a.b.c", "r", "a_b.c", "s"]
    hits = colliding_topics("a.b_c", existing)
    assert sorted(hits) == ["a.b.c", "a_b.c", "a_b_c"]
    # A HashSet's order does not depend on the order the topics came in.
    assert colliding_topics("a.b_c", list(reversed(existing))) == hits


def test_java_hashes():
    assert java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert java_string_hash("") == 0
    assert java_int_hash(-1) == 0xFFFFFFFF


def test_scala_set_order_matches_scala_2_13():
    # Scala 2.13 REPL: Set(1, 2, 3, 4, 5) prints HashSet(5, 1, 2, 3, 4); (1 to 10).toSet prints
    # HashSet(5, 10, 1, 6, 9, 2, 7, 3, 8, 4).
    assert scala_set_order([1, 2, 3, 4, 5], java_int_hash) == [5, 1, 2, 3, 4]
    assert scala_set_order(range(1, 11), java_int_hash) == [5, 10, 1, 6, 9, 2, 7, 3, 8, 4]
    assert scala_set_order([3, 1, 2], java_int_hash) == [3, 1, 2]  # Set3: insertion order
    assert scala_set_order([3, 1, 3, 2], java_int_hash) == [3, 1, 2]
