"""structlog set-up: JSON lines, one per event, to stderr or `log.file`."""

import logging
import sys
from typing import Any, TextIO

import structlog

_LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR}


def configure(level: str = "INFO", path: str | None = None, **bound: Any) -> Any:
    """Configure structlog for this process and return a logger with `bound` keys."""
    stream: TextIO = open(path, "a", buffering=1) if path else sys.stderr
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=True,
    )
    # Libraries (kazoo) log through the standard library: keep their warnings.
    logging.basicConfig(stream=stream, level=logging.WARNING,
                        format='{"level":"%(levelname)s","logger":"%(name)s","event":"%(message)s"}')
    return structlog.get_logger().bind(**bound)
