"""conformance/run.py reads test-runner's closing summary: one row per test of the number it ran,
coloured as test-runner prints it (tests/test.c: "|%s %-40s | %10s | %7.3fs %s|" and the reason)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from run import ANSI, Row, first_failure, summary_rows  # noqa: E402  (conformance/ is scripts, not a package)

RED, GREEN, CYAN, CLEAR = "\033[31m", "\033[32m", "\033[36m", "\033[0m"


def line(colour: str, name: str, state: str, seconds: float, reason: str = "") -> str:
    text = f"|{colour} {name:<40} | {state:>10} | {seconds:7.3f}s {CLEAR}|"
    return text + (f"{RED if state == 'FAILED' else CYAN} {reason}{CLEAR}" if reason else "")


SUMMARY = "\n".join([
    "TEST 20261127151500 (bare, scenario default) SUMMARY",
    "#==================================================================#",
    line(GREEN, "<MAIN>", "PASSED", 200.1),
    line(CYAN, "0044_partition_cnt", "SKIPPED", 0, "not included in TESTS list"),
    line(GREEN, "0045_subscribe_update", "PASSED", 61.5),
    line(CYAN, "0045_subscribe_update_topic_remove", "SKIPPED", 0, " "),
    line(CYAN, "0045_resubscribe_with_regex", "SKIPPED", 0, "Test skipped due to quick mode"),
    line(CYAN, "0045_subscribe_update_mock", "SKIPPED", 0, "Filtered due to negative test flags"),
    line(RED, "0045_subscribe_many_updates", "FAILED", 180.25,
         "0045-subscribe_update.c:710: do_test_subscribe_many_updates: Timed out waiting for assignment"),
    "#==================================================================#",
])


def test_rows_of_the_number_with_their_reasons():
    assert summary_rows(ANSI.sub("", SUMMARY), "0045") == [
        Row("0045_subscribe_update", "PASSED", 61.5, ""),
        Row("0045_resubscribe_with_regex", "SKIPPED", 0.0, "Test skipped due to quick mode"),
        Row("0045_subscribe_many_updates", "FAILED", 180.25,
            "0045-subscribe_update.c:710: do_test_subscribe_many_updates: Timed out waiting for assignment"),
    ]


def test_nothing_of_another_number():
    assert summary_rows(ANSI.sub("", SUMMARY), "0001") == []


def test_first_failure_and_its_message():
    log = "\n".join([
        "[0081_admin                  / 53.478s] TEST FAILURE",
        '### Test "0081_admin (do_test_AlterConfigs:725)" failed at 0081-admin.c:882:do_test_AlterConfigs() '
        "at Fri Nov 27 15:36:44 2026: ###",
        "ConfigResource #1: expected NO_ERROR (0), got INVALID_REQUEST (Unexpected broker id)",
        '### Test "<MAIN>" failed at test.c:1798:test_wait_exit() at Fri Nov 27 15:36:45 2026: ###',
        "5 thread(s) still active in librdkafka",
    ])
    assert first_failure(log) == ("0081_admin (do_test_AlterConfigs:725)",
                                  "0081-admin.c:882:do_test_AlterConfigs(): ConfigResource #1: expected NO_ERROR (0), "
                                  "got INVALID_REQUEST (Unexpected broker id)")
    assert first_failure("all passed") is None
