"""structlog set-up: JSON lines, one per event, to stderr or `log.file`."""

import logging
import sys
from typing import Any, TextIO

import structlog

_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR}
# Log4j level names (BROKER_LOGGER) -> ours
LOG4J = {"TRACE": "DEBUG", "DEBUG": "DEBUG", "INFO": "INFO", "WARN": "WARNING", "ERROR": "ERROR", "FATAL": "ERROR"}
_METHOD_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "warn": logging.WARNING,
                  "error": logging.ERROR, "exception": logging.ERROR, "critical": logging.CRITICAL,
                  "fatal": logging.CRITICAL}
_current = {"level": logging.INFO}


def _level_filter(_logger: Any, method_name: str, event_dict: dict) -> dict:
    """The level check as a processor, so that set_level changes it for loggers already bound."""
    if _METHOD_LEVELS.get(method_name, logging.INFO) < _current["level"]:
        raise structlog.DropEvent
    return event_dict


def enabled(method_name: str) -> bool:
    """Whether an event at this level would be written: a per-request debug line can be skipped
    before its fields are built and its event dict is dropped by the processor chain."""
    return _METHOD_LEVELS.get(method_name, logging.INFO) >= _current["level"]


def set_level(level: str) -> None:
    """Apply a level (ours or a Log4j name, e.g. from IncrementalAlterConfigs on BROKER_LOGGER) at once."""
    name = LOG4J.get(level.upper(), level.upper())
    _current["level"] = _LEVELS[name]


def configure(level: str = "INFO", path: str | None = None, **bound: Any) -> Any:
    """Configure structlog for this process and return a logger with `bound` keys."""
    stream: TextIO = open(path, "a", buffering=1) if path else sys.stderr
    _current["level"] = _LEVELS[level.upper()]
    structlog.configure(
        processors=[
            _level_filter,
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),  # _level_filter decides
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=True,
    )
    # Libraries (kazoo) log through the standard library: keep their warnings.
    logging.basicConfig(stream=stream, level=logging.WARNING,
                        format='{"level":"%(levelname)s","logger":"%(name)s","event":"%(message)s"}')
    return structlog.get_logger().bind(**bound)
