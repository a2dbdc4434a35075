"""A local HTTP server that speaks the parts of the Gmail API v1 and Google's OAuth token endpoint twin uses.

google-api-python-client reaches it with `client_options={"api_endpoint": server.url}` (twin's
`TWIN_GMAIL_API_URL`), google-auth through the `token_uri` written in the token file. Served:

- `GET  /gmail/v1/users/me/profile`, `…/threads` (`q=newer_than:Nd`, `maxResults`, `pageToken`),
  `…/threads/<id>` (format=full), `…/history` (`startHistoryId`, `pageToken`; 404 for an expired historyId,
  the real API's answer), `…/labels` (`{"labels": [Label, …]}`, system labels and those `add_label` made; a
  scripted status while `labels_status` is set) — each needs `Authorization: Bearer <a token this server
  issued>`, else 401;
- `POST /batch/gmail/v1`: `multipart/mixed` of `application/http` parts, answered part by part with
  `Content-ID: <response-…>` as the real batch endpoint does (per-part 404s and scripted 429s included);
- `POST /token`: `grant_type=refresh_token` (400 `invalid_grant` once `revoke()` was called) and
  `grant_type=authorization_code` (the installed-app flow's code exchange).

Tests build the mailbox with `add_label()`, `add_thread()` / `add_message()` (each bumps the historyId and records a
`messageAdded` history record), expire history with `expire_history()`, and read `requests`.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import secrets
import threading
import time
from urllib.parse import parse_qs, urlsplit

from local_server import LocalServer, QuietHandler

PAGE_SIZE = 100
"""Threads and history records per page (the real API pages at ≤ 500; smaller pages exercise paging)."""
SYSTEM_LABELS = ("INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "CATEGORY_PERSONAL",
                 "CATEGORY_PROMOTIONS")
"""System labels every mailbox has (their id is their name, as the real API lists them)."""


class FakeGmail(LocalServer):
    """The mailbox of one account (`address`) and the token endpoint. Thread-safe; start with `start()`."""

    def __init__(self, address: str = "owner@example.com", port: int = 0):
        self.address = address
        self.threads: dict[str, dict] = {}
        self.history: list[dict] = []
        self.history_id = 1000
        self.oldest_history_id = 1000
        self.requests: list[str] = []
        self.tokens: set[str] = set()
        self.refresh_tokens: set[str] = {"refresh-1"}
        self.codes: dict[str, str] = {}
        self.throttle: list[str] = []
        """Thread ids whose next batch part answers 429 (then they are served normally)."""
        self.labels: dict[str, dict] = {
            name: {"id": name, "name": name, "type": "system", "messageListVisibility": "hide",
                   "labelListVisibility": "labelHide"} for name in SYSTEM_LABELS}
        self.labels_status: int | None = None
        """While set, `labels.list` answers this status (an error body), as a failing Gmail would."""
        self.lock = threading.Lock()
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                self._respond(*server.handle("GET", self.path, self.headers, b""))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._respond(*server.handle("POST", self.path, self.headers, body))

            def _respond(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler, port)

    # -- lifecycle ---------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The API root, `http://127.0.0.1:PORT/` (TWIN_GMAIL_API_URL)."""
        return self.http_url("/")

    @property
    def token_uri(self) -> str:
        return f"{self.url}token"

    # -- the mailbox -------------------------------------------------------------------------------------------
    def add_label(self, name: str) -> str:
        """Make a user label named `name` (as the owner would in Gmail) and return its id (`Label_<n>`)."""
        with self.lock:
            label_id = f"Label_{sum(1 for label in self.labels.values() if label['type'] == 'user') + 1}"
            self.labels[label_id] = {"id": label_id, "name": name, "type": "user", "messageListVisibility": "show",
                                     "labelListVisibility": "labelShow"}
        return label_id

    def add_thread(self, thread: dict) -> None:
        """Add a thread (`threads.get(format=full)` JSON); each of its messages is a `messageAdded` record."""
        with self.lock:
            self.threads[thread["id"]] = {**thread, "messages": []}
        for message in thread["messages"]:
            self.add_message(thread["id"], message)

    def add_message(self, thread_id: str, message: dict) -> None:
        """Append `message` to thread `thread_id` (created if new) as new mail: the historyId moves on."""
        with self.lock:
            self.history_id += 1
            message = {**message, "threadId": thread_id, "historyId": str(self.history_id)}
            thread = self.threads.setdefault(thread_id, {"id": thread_id, "messages": []})
            thread["messages"].append(message)
            thread["historyId"] = str(self.history_id)
            stub = {"id": message["id"], "threadId": thread_id, "labelIds": message.get("labelIds", [])}
            self.history.append({"id": str(self.history_id), "messages": [stub], "messagesAdded": [{"message": stub}]})

    def expire_history(self) -> None:
        """Forget every history record: any stored startHistoryId now answers 404."""
        with self.lock:
            self.oldest_history_id = self.history_id + 1
            self.history.clear()

    def revoke(self) -> None:
        """Refuse every refresh token from now on (`invalid_grant`) and every access token issued so far."""
        with self.lock:
            self.refresh_tokens.clear()
            self.tokens.clear()

    def issue_code(self) -> str:
        """An authorization code the token endpoint will exchange once (what Google's consent page returns)."""
        code = secrets.token_urlsafe(12)
        self.codes[code] = "refresh-" + secrets.token_urlsafe(6)
        return code

    def api_paths(self) -> list[str]:
        """The Gmail API paths requested so far (batch parts included), without query strings."""
        return [r.split("?")[0] for r in self.requests if "/gmail/v1/" in r]

    # -- protocol ----------------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, headers, body: bytes) -> tuple[int, str, bytes]:
        with self.lock:
            self.requests.append(f"{method} {path}")
        if path.startswith("/token"):
            return self._token(parse_qs(body.decode()))
        if not self._authorised(headers.get("Authorization", "")):
            return _json(401, _error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED"))
        if method == "POST" and path.startswith("/batch/gmail/v1"):
            return self._batch(headers.get("Content-Type", ""), body)
        status, payload = self._api(method, path)
        return _json(status, payload)

    def _authorised(self, header: str) -> bool:
        with self.lock:
            return header.startswith("Bearer ") and header[7:] in self.tokens

    def _token(self, form: dict[str, list[str]]) -> tuple[int, str, bytes]:
        grant = form.get("grant_type", [""])[0]
        with self.lock:
            if grant == "refresh_token" and form.get("refresh_token", [""])[0] in self.refresh_tokens:
                refresh = None
            elif grant == "authorization_code" and form.get("code", [""])[0] in self.codes:
                refresh = self.codes.pop(form["code"][0])
                self.refresh_tokens.add(refresh)
            else:
                return _json(400, {"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
            access = "ya29." + secrets.token_urlsafe(16)
            self.tokens.add(access)
        answer = {"access_token": access, "expires_in": 3599, "token_type": "Bearer",
                  "scope": "https://www.googleapis.com/auth/gmail.readonly"}
        if refresh:
            answer["refresh_token"] = refresh
        return _json(200, answer)

    def _api(self, method: str, path: str) -> tuple[int, dict]:
        parts = urlsplit(path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        route = parts.path.removeprefix("/gmail/v1/users/me")
        with self.lock:
            if method == "GET" and route == "/profile":
                messages = sum(len(t["messages"]) for t in self.threads.values())
                return 200, {"emailAddress": self.address, "messagesTotal": messages,
                             "threadsTotal": len(self.threads), "historyId": str(self.history_id)}
            if method == "GET" and route == "/threads":
                return 200, self._list_threads(query)
            if method == "GET" and route.startswith("/threads/"):
                thread = self.threads.get(route.split("/")[2])
                if thread is None:
                    return 404, _error(404, "Requested entity was not found.", "NOT_FOUND")
                return 200, json.loads(json.dumps(thread))
            if method == "GET" and route == "/history":
                return self._list_history(query)
            if method == "GET" and route == "/labels":
                if self.labels_status is not None:
                    return self.labels_status, _error(self.labels_status, "Backend Error", "INTERNAL")
                return 200, {"labels": [dict(label) for label in self.labels.values()]}
        return 404, _error(404, f"no route {method} {parts.path}", "NOT_FOUND")

    def _list_threads(self, query: dict[str, str]) -> dict:
        days = int(query.get("q", "newer_than:36500d").removeprefix("newer_than:").rstrip("d"))
        cutoff_ms = (time.time() - days * 86400) * 1000
        recent = [t for t in self.threads.values()
                  if t["messages"] and int(t["messages"][-1].get("internalDate", "0")) >= cutoff_ms]
        recent.sort(key=lambda t: int(t["messages"][-1].get("internalDate", "0")), reverse=True)
        start = int(query.get("pageToken", "0"))
        size = min(int(query.get("maxResults", PAGE_SIZE)), PAGE_SIZE)
        page = recent[start:start + size]
        answer = {"threads": [{"id": t["id"], "snippet": "", "historyId": t["historyId"]} for t in page],
                  "resultSizeEstimate": len(recent)}
        if start + size < len(recent):
            answer["nextPageToken"] = str(start + size)
        return answer

    def _list_history(self, query: dict[str, str]) -> tuple[int, dict]:
        start_id = int(query["startHistoryId"])
        if start_id < self.oldest_history_id:
            return 404, _error(404, "Requested entity was not found.", "NOT_FOUND")
        records = [r for r in self.history if int(r["id"]) > start_id]
        offset = int(query.get("pageToken", "0"))
        answer = {"history": records[offset:offset + PAGE_SIZE], "historyId": str(self.history_id)}
        if offset + PAGE_SIZE < len(records):
            answer["nextPageToken"] = str(offset + PAGE_SIZE)
        if not answer["history"]:
            del answer["history"]
        return 200, answer

    def _batch(self, content_type: str, body: bytes) -> tuple[int, str, bytes]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body)
        boundary = "batch_" + secrets.token_hex(8)
        out = []
        for part in message.iter_parts():
            request_line = part.get_payload(decode=True).decode().split("\r\n", 1)[0].split("\n", 1)[0]
            part_method, part_path, _ = request_line.split(" ", 2)
            with self.lock:
                self.requests.append(f"{part_method} {part_path} (batch)")
                thread_id = urlsplit(part_path).path.rsplit("/", 1)[-1]
                throttled = thread_id in self.throttle
                if throttled:
                    self.throttle.remove(thread_id)
            if throttled:
                status, payload = 429, _error(429, "Too many concurrent requests for user.", "RESOURCE_EXHAUSTED")
            else:
                status, payload = self._api(part_method, part_path)
            content_id = part["Content-ID"].strip("<>")
            reason = {200: "OK", 404: "Not Found", 429: "Too Many Requests"}.get(status, "Error")
            out.append(f"--{boundary}\r\nContent-Type: application/http\r\nContent-ID: <response-{content_id}>\r\n\r\n"
                       f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                       f"{json.dumps(payload)}\r\n")
        out.append(f"--{boundary}--\r\n")
        return 200, f"multipart/mixed; boundary={boundary}", "".join(out).encode()


def _error(code: int, message: str, status: str) -> dict:
    return {"error": {"code": code, "message": message, "status": status,
                      "errors": [{"message": message, "domain": "global", "reason": status.lower()}]}}


def _json(status: int, payload: dict) -> tuple[int, str, bytes]:
    return status, "application/json; charset=UTF-8", json.dumps(payload).encode()


def token_file_json(server: FakeGmail, refresh_token: str = "refresh-1", expired: bool = True) -> str:
    """An authorized-user token file (what `twin connect gmail` saves) pointing at `server`'s token endpoint:
    expired, so the first sync refreshes it (and saves it back)."""
    expiry = "2020-01-01T00:00:00Z" if expired else "2099-01-01T00:00:00Z"
    return json.dumps({"token": "ya29.stale", "refresh_token": refresh_token, "token_uri": server.token_uri,
                       "client_id": "1234.apps.googleusercontent.com", "client_secret": "test-client-secret",
                       "scopes": ["https://www.googleapis.com/auth/gmail.readonly"], "expiry": expiry})


def main() -> None:
    """Serve a small sample mailbox until interrupted (demo and acceptance runs): prints the API root and the
    token endpoint, and writes a token file for them to `--token-file` (put it at `<data dir>/gmail-token.json`
    and set TWIN_GMAIL_API_URL / TWIN_GMAIL_TOKEN_URL). Each line typed on stdin arrives as a new email."""
    import argparse
    import sys
    from datetime import UTC, datetime, timedelta
    from pathlib import Path

    from gmail_fixtures import message_json, thread_json

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token-file", type=Path, required=True)
    args = parser.parse_args()
    server = FakeGmail(port=args.port).start()
    now = datetime.now(UTC)
    samples = [("Alice Smith <alice@example.com>", "Quarterly report", "The numbers for the quarterly report are "
                "final now. Can you send me the slides by Friday?"),
               ("Bob Jones <bob@example.com>", "Lunch on Thursday", "The Italian place on Main Street was great. I "
                "booked the same table for Thursday at noon."),
               ("Carol Diaz <carol@example.com>", "Concert tickets", "I bought two tickets for the jazz concert in "
                "Tartu on 12 December. The show starts at eight.")]
    for i, (sender, subject, body) in enumerate(samples):
        server.add_thread(thread_json(f"demo-{i}", messages=[message_json(
            f"demo-{i}-m1", sender=sender, to=server.address, subject=subject, body_text=body,
            sent_at=now - timedelta(hours=5 - i))]))
    args.token_file.parent.mkdir(parents=True, exist_ok=True)
    args.token_file.write_text(token_file_json(server))
    args.token_file.chmod(0o600)
    print(f"TWIN_GMAIL_API_URL={server.url}\nTWIN_GMAIL_TOKEN_URL={server.token_uri}", flush=True)
    for n, line in enumerate(sys.stdin):
        if line.strip():
            server.add_thread(thread_json(f"typed-{n}", messages=[message_json(
                f"typed-{n}-m1", sender="Dan Brown <dan@example.com>", to=server.address, subject=line.strip()[:60],
                body_text=line.strip(), sent_at=datetime.now(UTC))]))
            print(f"new email typed-{n}", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
