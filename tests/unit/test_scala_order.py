"""fauxka/model/scala_order.py: Java's String.hashCode and a Scala 2.13 mutable.HashMap's table and order."""

from fauxka.model.java_hash import java_string_hash
from fauxka.model.scala_order import buckets_for, scala_hash_map_order


def test_java_string_hash_is_javas():
    # values of "x".hashCode() in Java
    assert [java_string_hash(s) for s in ("", "a", "hello", "cleanup.policy")] == [0, 97, 99162322, -537988164]
    assert java_string_hash("polygenelubricants") == -(2 ** 31)  # the famous Integer.MIN_VALUE hash


def test_the_table_doubles_once_size_plus_one_reaches_three_quarters():
    assert [buckets_for(n) for n in (0, 11, 12, 23, 24, 47, 48, 191, 192, 383, 384)] == [
        16, 16, 32, 32, 64, 64, 128, 256, 512, 512, 1024]


def test_order_is_by_bucket_then_improved_hash_and_a_subset_keeps_it():
    names = [f"key.{i}" for i in range(40)]
    whole = scala_hash_map_order(names)
    some = [n for n in names if n.endswith(("1", "5"))]
    assert [n for n in whole if n in some] == scala_hash_map_order(some, len(names))
    assert sorted(whole) == sorted(names)
