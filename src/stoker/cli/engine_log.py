"""The embedded engine's log: where the engine's warnings and errors go when it runs
inside the ``stoker`` command.

The command's terminal shows what the user asked for (tables, progress, one line per
problem); the engine's log lines, and the traceback of a plugin's unexpected error, go to
``stoker.log`` beside the SQLite store (stoker's data directory for another store), or
to the file ``STOKER_LOG_FILE`` names. Without this, Python's last-resort handler printed
them, tracebacks and all, among the command's output. The file is rotated at 5 MB (two
old files kept), so a long-lived store's log stays bounded. What loading the plugins and
the global environment warns of (``stoker.environment``) is shown on stderr as well.

Must not: configure logging for ``stoker serve`` or ``stoker worker``, which log to their
own stderr as services do.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path

from stoker.settings import store_directory

LOG_FILE_VARIABLE = "STOKER_LOG_FILE"
# The logger whose warnings the command's user also sees on stderr.
USER_LOGGER = "stoker.environment"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 2
_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def log_file(database_url: str) -> Path:
    """The file the embedded engine on ``database_url`` logs to."""
    named = os.environ.get(LOG_FILE_VARIABLE)
    return Path(named).expanduser() if named else store_directory(database_url) / "stoker.log"


def send_to_file(database_url: str) -> Path | None:
    """Send the engine's WARNING and worse to its log file (once per process); the path,
    or None when the file cannot be opened (then the lines are dropped, not printed)."""
    root = logging.getLogger()
    for existing in root.handlers:
        if getattr(existing, "stoker_engine_log", False):
            return Path(existing.baseFilename) if isinstance(existing, logging.FileHandler) else None
    path = log_file(database_url)
    written: Path | None = path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
        )
    except OSError:
        handler, written = logging.NullHandler(), None
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.stoker_engine_log = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    # What loading the plugins and the global environment finds (a plugin skipped, a
    # support status chain that skips a step) is for the user of the command: on the
    # terminal too, as the message alone.
    told = logging.StreamHandler()
    told.setLevel(logging.WARNING)
    told.setFormatter(logging.Formatter("%(message)s"))
    logging.getLogger(USER_LOGGER).addHandler(told)
    return written
