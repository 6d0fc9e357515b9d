"""The Python Spark starts its workers with, checked before the fauxka-kafka source is registered.

Spark runs a Python data source in worker processes started with PYSPARK_PYTHON, else `python3`
from PATH, not with the interpreter that runs the driver: a job started as `.venv/bin/python job.py`
without the venv activated gets workers that cannot import fauxka or pyarrow, and the job dies deep
in a worker's traceback. `check` says so at registration instead, and how to fix it.
"""

import os
import shutil
import subprocess
import sys
import tempfile

NEEDED = ("fauxka.pipeline.kafka_source", "confluent_kafka", "pyarrow")


class WorkerPythonError(RuntimeError):
    pass


def check(python: str | None) -> None:
    """Raise WorkerPythonError unless `python` (Spark's pythonExec) can import what the source runs on."""
    if not python:
        return
    found = shutil.which(python) or python
    if os.path.abspath(found) == os.path.abspath(sys.executable):
        return  # this very interpreter: it imported us
    probe = subprocess.run([found, "-c", "import " + ", ".join(NEEDED)], capture_output=True, text=True,
                           timeout=120, cwd=tempfile.gettempdir())  # not this directory: a worker's is not either
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["it did not start"])[-1]
        raise WorkerPythonError(
            f"Spark starts its Python workers with {python!r} ({found}), which cannot run the fauxka-kafka source: "
            f"{reason}. Set PYSPARK_PYTHON={sys.executable} before the SparkSession starts (or activate the "
            f"virtualenv fauxka is installed in, so that `python3` is its Python).")
