"""`fauxka chaos`: a seeded random nemesis (schedule.py, nemesis.py) under real traffic
(workloads.py, txn_workload.py), a history of everything the clients saw (history.py), a checker reading it against
Kafka's guarantees (checker.py) and a picture of the run (picture.py). run.py ties them together;
fauxka/chaos_cli.py is the command. fauxka.testing.chaos puts a user's own application under the same nemesis."""

from .checker import CHECKS, CheckResult, Verdict, check
from .history import History, load
from .schedule import NEMESES, ScheduleError, Step, plan

__all__ = ["CHECKS", "CheckResult", "History", "NEMESES", "ScheduleError", "Step", "Verdict", "check", "load", "plan"]
