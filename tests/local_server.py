"""The HTTP server under the fakes of remote protocols (tests/fake_llm.py, fake_gmail.py, fake_telegram.py): a
`ThreadingHTTPServer` on 127.0.0.1, served from a daemon thread, so a test talks real HTTP to a local process."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (a test's output shows its own lines, not one per request)."""

    def log_message(self, *args: object) -> None:
        """Log nothing."""


class LocalServer:
    """Serves `handler` on 127.0.0.1:`port` (0: a free port the system picks) once `start()`ed; `stop()` ends it.
    Request threads are daemon threads: a client that hangs never keeps the test process alive."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def http_url(self, path: str) -> str:
        """`http://127.0.0.1:PORT` followed by `path` (which starts with "/")."""
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def start(self) -> Self:
        """Serve in a background thread; returns self."""
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (when started) and close the socket."""
        if self.thread.is_alive():
            self.server.shutdown()
        self.server.server_close()
