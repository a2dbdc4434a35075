"""A local HTTP server that speaks the Telegram Bot API as python-telegram-bot 22.x uses it, for tests and demos.

Point the library at it with `Bot(token, base_url=server.url)` or `ApplicationBuilder().base_url(server.url)`;
`server.url` is `http://127.0.0.1:PORT/bot` and the library appends `<TOKEN>/<method>`. PTB 22 sends
`POST /bot<TOKEN>/<method>` with a form-urlencoded body (multipart when it uploads files), every value a
string and lists/dicts JSON-encoded; JSON bodies and GET query strings are accepted too.

Tests queue user messages with `send_user_message()` (long polls wake at once), script flood control with
`script_flood()`, and read what the bot sent from `sent` / `wait_for_sent()`.

Run it on its own for a demo: `python tests/fake_telegram.py --port 8081` prints the base URL, turns each line
typed on stdin into a message from user 42 and prints every message the bot sends as `bot -> CHAT: text`.
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from local_server import LocalServer, QuietHandler

MAX_MESSAGE_LENGTH = 4096
TEST_BOT_TOKEN = "4242:SECRET-bot-token_x"
"""The bot token the tests give the twin and this server (its secret part must never reach a log or a reply)."""
BOT_USER = {
    "id": 1000,
    "is_bot": True,
    "first_name": "Twin",
    "username": "twin_test_bot",
    "can_join_groups": False,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
    "can_connect_to_business": False,
    "has_main_web_app": False,
}
# Form values of these parameters are free text: never JSON-decode them (a message "42" stays a string).
TEXT_PARAMS = frozenset({"text", "caption", "question", "explanation", "title", "description", "short_description",
                         "name", "query", "message_text", "first_name", "last_name", "secret_token"})
COMMAND_RE = re.compile(r"/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?")


def _decode_value(key: str, value: str) -> Any:
    """A form value as the Bot API reads it: numbers, booleans, lists and objects arrive JSON-encoded."""
    if key in TEXT_PARAMS:
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return value if isinstance(decoded, str) else decoded


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_body(content_type: str, body: bytes) -> dict[str, Any]:
    """Decode a request body (form-urlencoded, multipart/form-data or JSON) into a params dict."""
    kind = content_type.split(";")[0].strip().lower()
    if not body:
        return {}
    if kind == "application/json":
        data = json.loads(body)
        return data if isinstance(data, dict) else {}
    if kind == "multipart/form-data":
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
        params: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not name:
                continue
            payload = part.get_payload(decode=True) or b""
            if part.get_filename() is not None:
                params[name] = {"filename": part.get_filename(), "content": payload}
            else:
                params[name] = _decode_value(name, payload.decode("utf-8", "replace"))
        return params
    # application/x-www-form-urlencoded (and anything unlabelled)
    return {k: _decode_value(k, v) for k, v in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)}


class TelegramError(Exception):
    """An error answer: `{"ok": false, "error_code": code, "description": ..., "parameters": ...}`."""

    def __init__(self, code: int, description: str, parameters: dict | None = None):
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


class FakeTelegram(LocalServer):
    """The server: `start()` binds 127.0.0.1 (port 0 = a free one); `url` is the base URL to give the library.

    Recorded state (read it under `lock` or after the bot is done): `requests` [(method, params)],
    `sent` [(chat_id, text)] for every delivered sendMessage, `send_attempts` [(time.monotonic(), chat_id)] for
    every sendMessage attempt including flood-rejected ones, `acknowledged_offset` (highest getUpdates offset).
    `on_send(chat_id, text)`, if set, is called after each delivered message (outside the lock).
    """

    def __init__(self, token: str = "123:TEST", port: int = 0):
        self.token = token
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.sent: list[tuple[int | str, str]] = []
        self._sent_messages: list[dict] = []
        self.send_attempts: list[tuple[float, int | str]] = []
        self.acknowledged_offset = 0
        self.on_send: Callable[[int | str, str], None] | None = None
        self._updates: list[dict] = []
        self._next_update_id = 1
        self._next_message_id = 1
        self._chats: dict[int, dict] = {}
        self._floods: deque[int] = deque()
        self.refusing_chats: set[int] = set()
        """Chats whose sendMessage gets 403 "bot can't initiate conversation with a user" (a user who never
        opened the bot)."""
        self._allowed_updates: list[str] = []
        self._poll_generation = 0
        self._stopping = False
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                self._handle(b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self._handle(self.rfile.read(length) if length else b"")

            def _handle(self, body: bytes) -> None:
                parts = urlsplit(self.path)
                match = re.fullmatch(r"/bot([^/]*)/([A-Za-z_]+)", parts.path)
                if not match:
                    return self._error(TelegramError(404, "Not Found"))
                if match.group(1) != fake.token:
                    return self._error(TelegramError(401, "Unauthorized"))
                try:
                    params = {k: _decode_value(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)}
                    params.update(parse_body(self.headers.get("content-type", ""), body))
                except ValueError as exc:
                    return self._error(TelegramError(400, f"Bad Request: can't parse request: {exc}"))
                try:
                    result = fake._call(match.group(2), params)
                except TelegramError as err:
                    return self._error(err)
                self._send(200, {"ok": True, "result": result})

            def _error(self, err: TelegramError) -> None:
                payload: dict[str, Any] = {"ok": False, "error_code": err.code, "description": err.description}
                if err.parameters:
                    payload["parameters"] = err.parameters
                self._send(err.code, payload)

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (cancelled long poll): what a real server sees too

        super().__init__(Handler, port)

    @property
    def url(self) -> str:
        """The base URL to give the library, e.g. `http://127.0.0.1:40123/bot` (it appends `<TOKEN>/<method>`)."""
        return self.http_url("/bot")

    def stop(self) -> None:
        """End pending long polls (they answer with no updates), stop serving and close the socket."""
        with self.cond:
            self._stopping = True
            self.cond.notify_all()
        super().stop()

    def __enter__(self) -> FakeTelegram:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- test controls -------------------------------------------------------------------------------------

    def send_user_message(self, text: str, user_id: int = 42, chat_id: int | None = None,
                          first_name: str = "Owner", **fields: Any) -> int:
        """Queue a private text message from `user_id` as a `message` update (waking long polls); returns its
        update_id. A leading `/command` gets a `bot_command` entity, as Telegram adds. `fields` are further
        Message fields as the Bot API sends them: `forward_origin` (see `origin_user` and its kin, with
        `forward_date`), `reply_to_message` (`message_by`, or a message from `sent_messages`), `quote`
        (`text_quote`), `external_reply` (`external_reply`)."""
        chat = {"id": chat_id or user_id, "type": "private", "first_name": first_name}
        with self.cond:
            message: dict[str, Any] = {
                "message_id": self._next_message_id, "date": int(time.time()), "chat": chat,
                "from": {"id": user_id, "is_bot": False, "first_name": first_name}, "text": text, **fields}
            if "forward_origin" in fields:
                message.setdefault("forward_date", fields["forward_origin"]["date"])
            command = COMMAND_RE.match(text)
            if command and (command.end() == len(text) or not (text[command.end()].isalnum()
                                                                 or text[command.end()] in "_@")):
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": _utf16_len(command.group())}]
            update = {"update_id": self._next_update_id, "message": message}
            self._next_update_id += 1
            self._next_message_id += 1
            self._chats[chat["id"]] = chat
            self._updates.append(update)
            self.cond.notify_all()
            return update["update_id"]

    def sent_messages(self) -> list[dict]:
        """The Message objects the bot sent (as the API returned them), oldest first: what a reply can point to."""
        with self.cond:
            return [json.loads(json.dumps(m)) for m in self._sent_messages]

    def script_flood(self, retry_after_s: int, times: int = 1) -> None:
        """Make the next `times` sendMessage calls fail with 429 `retry_after = retry_after_s` (not delivered)."""
        with self.cond:
            self._floods.extend([retry_after_s] * times)

    def wait_for_sent(self, n: int, timeout_s: float = 10) -> list[tuple[int | str, str]]:
        """Block until at least `n` messages were delivered; returns a copy of `sent`, else AssertionError."""
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.sent) >= n, timeout_s):
                raise AssertionError(f"expected {n} sent messages within {timeout_s}s, got {len(self.sent)}: "
                                     f"{self.sent!r}")
            return list(self.sent)

    def pending(self) -> list[dict]:
        """The updates not yet acknowledged by a getUpdates offset."""
        with self.cond:
            return [json.loads(json.dumps(u)) for u in self._updates]

    def methods(self) -> list[str]:
        """The method names of the requests received so far, in order."""
        with self.cond:
            return [method for method, _ in self.requests]

    # ---- API methods ---------------------------------------------------------------------------------------

    def _call(self, method: str, params: dict[str, Any]) -> Any:
        with self.cond:
            self.requests.append((method, params))
        name = method.lower()  # Telegram method names are case-insensitive
        if name == "getme":
            return dict(BOT_USER)
        if name == "deletewebhook":
            if params.get("drop_pending_updates") is True:
                with self.cond:
                    self._updates.clear()
            return True
        if name == "getwebhookinfo":
            with self.cond:
                return {"url": "", "has_custom_certificate": False, "pending_update_count": len(self._updates)}
        if name == "getmycommands":
            return []
        if name == "getupdates":
            return self._get_updates(params)
        if name == "sendmessage":
            return self._send_message(params)
        return True  # setMyCommands, sendChatAction and anything unknown: harmless success

    def _get_updates(self, params: dict[str, Any]) -> list[dict]:
        try:
            offset = int(params.get("offset") or 0)
            limit = max(1, min(100, int(params.get("limit") or 100)))
            timeout = max(0.0, float(params.get("timeout") or 0))
        except (TypeError, ValueError) as exc:
            raise TelegramError(400, f"Bad Request: wrong parameter: {exc}") from exc
        allowed = params.get("allowed_updates")
        deadline = time.monotonic() + timeout
        with self.cond:
            self._poll_generation += 1
            generation = self._poll_generation
            self.cond.notify_all()  # an older long poll is now superseded
            if isinstance(allowed, list):
                self._allowed_updates = [str(a) for a in allowed]  # remembered until changed, as Telegram does
            if offset > 0:
                self.acknowledged_offset = max(self.acknowledged_offset, offset)
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            elif offset < 0:  # "-N": keep only the last N pending updates, forget the rest
                self._updates = self._updates[offset:]
            while True:
                if self._allowed_updates and "message" not in self._allowed_updates:
                    self._updates = [u for u in self._updates if "message" not in u]
                if self._updates or self._stopping:
                    return [json.loads(json.dumps(u)) for u in self._updates[:limit]]
                if generation != self._poll_generation:
                    raise TelegramError(409, "Conflict: terminated by other getUpdates request; make sure that "
                                             "only one bot instance is running")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return []
                self.cond.wait(remaining)

    def _send_message(self, params: dict[str, Any]) -> dict:
        chat_id = params.get("chat_id")
        text = params.get("text")
        text = "" if text is None else str(text)
        with self.cond:
            self.send_attempts.append((time.monotonic(), chat_id))
            if self._floods:
                retry_after = self._floods.popleft()
                raise TelegramError(429, f"Too Many Requests: retry after {retry_after}",
                                    {"retry_after": retry_after})
        if chat_id is None or chat_id == "":
            raise TelegramError(400, "Bad Request: chat_id is empty")
        if not isinstance(chat_id, int) or isinstance(chat_id, bool):
            raise TelegramError(400, "Bad Request: chat not found")
        if chat_id in self.refusing_chats:
            raise TelegramError(403, "Forbidden: bot can't initiate conversation with a user")
        if not text.strip():
            raise TelegramError(400, "Bad Request: message text is empty")
        if len(text) > MAX_MESSAGE_LENGTH:
            raise TelegramError(400, "Bad Request: message is too long")
        with self.cond:
            message = {"message_id": self._next_message_id, "date": int(time.time()),
                       "chat": dict(self._chats.get(chat_id, {"id": chat_id, "type": "private"})),
                       "from": dict(BOT_USER), "text": text}
            self._next_message_id += 1
            self.sent.append((chat_id, text))
            self._sent_messages.append(message)
            self.cond.notify_all()
            callback = self.on_send
        if callback is not None:
            callback(chat_id, text)
        return message


# ---- Bot API shapes of text by someone else (forward_origin, reply_to_message, quote, external_reply) -------------

def _user(user_id: int, first_name: str, last_name: str | None = None, username: str | None = None) -> dict:
    user: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
    if last_name:
        user["last_name"] = last_name
    if username:
        user["username"] = username
    return user


def origin_user(user_id: int, first_name: str, last_name: str | None = None, username: str | None = None,
                date: int | None = None) -> dict:
    """A `MessageOriginUser`: forwarded from a user who allows linking to their account."""
    return {"type": "user", "date": date or int(time.time()) - 3600,
            "sender_user": _user(user_id, first_name, last_name, username)}


def origin_hidden_user(name: str, date: int | None = None) -> dict:
    """A `MessageOriginHiddenUser`: forwarded from a user who hides their account (only a name)."""
    return {"type": "hidden_user", "date": date or int(time.time()) - 3600, "sender_user_name": name}


def origin_chat(chat_id: int, title: str, author_signature: str | None = None, date: int | None = None) -> dict:
    """A `MessageOriginChat`: sent on behalf of a group chat (anonymous admin)."""
    origin = {"type": "chat", "date": date or int(time.time()) - 3600,
              "sender_chat": {"id": chat_id, "type": "supergroup", "title": title}}
    return origin | ({"author_signature": author_signature} if author_signature else {})


def origin_channel(chat_id: int, title: str, message_id: int = 7, author_signature: str | None = None,
                   date: int | None = None) -> dict:
    """A `MessageOriginChannel`: a post of a channel."""
    origin = {"type": "channel", "date": date or int(time.time()) - 3600,
              "chat": {"id": chat_id, "type": "channel", "title": title}, "message_id": message_id}
    return origin | ({"author_signature": author_signature} if author_signature else {})


def message_by(user_id: int, first_name: str, text: str, chat_id: int, message_id: int = 900,
               last_name: str | None = None, **fields: Any) -> dict:
    """A Message as it appears in `reply_to_message`: `text` written by that user in chat `chat_id`."""
    return {"message_id": message_id, "date": int(time.time()) - 600, "chat": {"id": chat_id, "type": "private"},
            "from": _user(user_id, first_name, last_name), "text": text, **fields}


def text_quote(text: str, position: int = 0, is_manual: bool = True) -> dict:
    """A `TextQuote`: the part of the replied-to message the user quoted."""
    return {"text": text, "position": position, "is_manual": is_manual}


def external_reply(origin: dict, chat: dict | None = None, message_id: int | None = None) -> dict:
    """An `ExternalReplyInfo`: a reply to a message of another chat (its text comes in `quote`)."""
    info: dict[str, Any] = {"origin": origin}
    if chat is not None:
        info["chat"] = chat
    if message_id is not None:
        info["message_id"] = message_id
    return info


def main() -> None:
    """Serve until interrupted: print the base URL, turn each stdin line into a message from user 42, and print
    every message the bot sends as `bot -> CHAT: text` (demo runs)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default="123:TEST")
    parser.add_argument("--user-id", type=int, default=42)
    args = parser.parse_args()
    fake = FakeTelegram(args.token, args.port)
    fake.on_send = lambda chat_id, text: print(f"bot -> {chat_id}: {text}", flush=True)
    fake.start()
    print(fake.url, flush=True)
    try:
        for line in sys.stdin:
            if line.strip():
                fake.send_user_message(line.rstrip("\n"), user_id=args.user_id)
        fake.thread.join()  # stdin closed: keep serving
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
