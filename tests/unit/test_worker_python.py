"""The fauxka-kafka source refuses, at registration, a Spark whose Python workers could not import it."""

import shutil
import sys

import pytest

from fauxka.pipeline.worker_python import WorkerPythonError, check


def test_this_interpreter_passes_at_once():
    check(sys.executable)
    check(None)


@pytest.mark.skipif(shutil.which("/usr/bin/python3") is None, reason="no system Python")
def test_a_python_without_fauxka_is_named_with_the_fix():
    with pytest.raises(WorkerPythonError) as raised:
        check("/usr/bin/python3")  # Debian's: neither fauxka nor pyarrow installed in it
    message = str(raised.value)
    assert "'/usr/bin/python3'" in message and "No module named" in message, message
    assert f"PYSPARK_PYTHON={sys.executable}" in message
