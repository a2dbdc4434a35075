"""Logging for entry points only (STYLE.md 10): one line per record, journald priorities under systemd.

Under systemd (`JOURNAL_STREAM` or `INVOCATION_ID` set) each line starts with `<N>` so journald sets
PRIORITY (DEBUG 7, INFO 6, WARNING 4, ERROR 3, CRITICAL 2; LIBRARY_NOTES §7) and tracebacks are
folded onto the same line, so one record is one journal entry.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

from twin.outside_text import escape_controls

_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3, logging.CRITICAL: 2}


def under_systemd() -> bool:
    """True when stdout goes to the journal of a systemd unit."""
    return bool(os.environ.get("JOURNAL_STREAM") or os.environ.get("INVOCATION_ID"))


class OneLineFormatter(logging.Formatter):
    """Formats a record, folding newlines (tracebacks) into ` | ` and, under systemd, prefixing `<N>`."""

    def __init__(self, journal: bool):
        fmt = "%(name)s: %(message)s" if journal else "%(asctime)s %(levelname)s %(name)s: %(message)s"
        super().__init__(fmt, datefmt="%Y-%m-%dT%H:%M:%S")
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        """One line: newlines folded into ` | `, every other terminal control escaped (a file name, a model's
        answer in a message: `twin.outside_text.escape_controls`), `<N>` priority prefix under systemd."""
        text = escape_controls(super().format(record).replace("\r\n", "\n"), newlines=True).replace("\n", " | ")
        return f"<{_PRIORITY.get(record.levelno, 6)}>{text}" if self.journal else text


class RedactSecrets(logging.Filter):
    """Replaces each of `secrets` (the bot token, the API key) with `<redacted>` in every record's final text,
    so no library's log line (a URL with the token in it, an exception) can put one in the journal."""

    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        """Render the message once, scrub it, and keep the record (always True)."""
        if self.secrets:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
                record.exc_info = record.exc_text = None
            for secret in self.secrets:
                text = text.replace(secret, "<redacted>")
            record.msg, record.args = text, None
        return True


def configure_logging(level: str = "INFO", secrets: list[str] | None = None, stream: TextIO | None = None) -> None:
    """Send every logger to `stream` (default stdout; `twin mcp` gives stderr, its stdout being the protocol's),
    one line per record, with `secrets` (the values of secret settings) redacted; quiet RQ's per-job and the HTTP
    clients' per-request chatter to WARNING."""
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(OneLineFormatter(journal=under_systemd()))
    handler.addFilter(RedactSecrets(secrets or []))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # RQ's per-job chatter; the HTTP client's per-request lines (the provider's failures get their own line)
    for noisy in ("rq.worker", "rq.scheduler", "rq.queue", "rq.job", "openai", "httpx", "httpx2", "httpcore",
                  "httpcore2", "telegram", "apscheduler"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
