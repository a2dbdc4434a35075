"""Builders of real Gmail API response shapes (field names from the shipped discovery document
`googleapiclient/discovery_cache/documents/gmail.v1.json`: Thread, Message, MessagePart, MessagePartBody,
MessagePartHeader), for the parser's tests and for a fake Gmail server.

A message's payload is what `users.threads.get(format="full")` returns: the top part carries the RFC 5322
headers; a text and an HTML body become a `multipart/alternative`; attachments make it a `multipart/mixed` whose
attachment parts have a `filename` and a `body.attachmentId` (never data); `body.data` is base64url without
padding; `partId`s are "", "0", "0.1", … as Gmail numbers them; non-attachment parts have `filename: ""`.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import format_datetime

DEFAULT_SENT_AT = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def b64url(data: bytes) -> str:
    """base64url without padding, as Gmail sends `body.data`."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def text_part(mime_type: str, content: str | bytes, charset: str = "utf-8", headers: Sequence[tuple] = ()) -> dict:
    """A `text/*` MessagePart (no partId yet); `content` as bytes is sent as is (e.g. invalid UTF-8)."""
    raw = content if isinstance(content, bytes) else content.encode(charset)
    return {"mimeType": mime_type, "filename": "",
            "headers": _headers([("Content-Type", f'{mime_type}; charset="{charset}"'),
                                 ("Content-Transfer-Encoding", "quoted-printable"), *headers]),
            "body": {"size": len(raw), "data": b64url(raw)}}


def attachment_part(filename: str, size: int, mime_type: str | None = None) -> dict:
    """An attachment MessagePart: a name and an `attachmentId`, its bytes to be fetched separately."""
    mime_type = mime_type or mimetypes.guess_type(filename)[0] or "application/octet-stream"
    attachment_id = "ANGjdJ" + hashlib.sha256(f"{filename}:{size}".encode()).hexdigest()[:40]
    return {"mimeType": mime_type, "filename": filename,
            "headers": _headers([("Content-Type", f'{mime_type}; name="{filename}"'),
                                 ("Content-Disposition", f'attachment; filename="{filename}"'),
                                 ("Content-Transfer-Encoding", "base64"), ("X-Attachment-Id", attachment_id[:12])]),
            "body": {"attachmentId": attachment_id, "size": size}}


def multipart(subtype: str, parts: Iterable[dict], boundary: str = "0000000000005f2a") -> dict:
    """A `multipart/<subtype>` container part (empty body, children in `parts`)."""
    return {"mimeType": f"multipart/{subtype}", "filename": "",
            "headers": _headers([("Content-Type", f'multipart/{subtype}; boundary="{boundary}"')]),
            "body": {"size": 0}, "parts": list(parts)}


def message_json(message_id: str, *, sender: str = "Alice Smith <alice@example.com>", to: str = "owner@example.com",
                 cc: str | None = None, subject: str = "Quarterly report", body_text: str | bytes | None = "Hello.",
                 body_html: str | None = None, sent_at: datetime = DEFAULT_SENT_AT,
                 attachments: Sequence[tuple[str, int]] = (), labels: Sequence[str] = ("INBOX",),
                 charset: str = "utf-8", extra_headers: Mapping[str, str] | Sequence[tuple[str, str]] = (),
                 thread_id: str | None = None, history_id: int = 1000, payload: dict | None = None) -> dict:
    """One Gmail Message resource (format=full). `sender`/`to`/`cc`/`subject` are raw header values (RFC 2047
    encoded words pass through); `sent_at` sets `internalDate` (ms) and the Date header; `attachments` are
    `(filename, size in bytes)`; `payload` replaces the generated body parts (the RFC 5322 headers are still set
    on it). The Message-ID header is `<message_id@mail.example.com>`."""
    if payload is None:
        bodies = []
        if body_text is not None:
            bodies.append(text_part("text/plain", body_text, charset))
        if body_html is not None:
            bodies.append(text_part("text/html", body_html, charset))
        if not bodies:
            bodies.append(text_part("text/plain", b"", charset))
        payload = bodies[0] if len(bodies) == 1 else multipart("alternative", bodies, "000000000000a1b2")
        if attachments:
            payload = multipart("mixed", [payload, *(attachment_part(name, size) for name, size in attachments)],
                                "000000000000c3d4")
    headers = [("MIME-Version", "1.0"), ("Date", format_datetime(sent_at)),
               ("Message-ID", f"<{message_id}@mail.example.com>"), ("Subject", subject), ("From", sender),
               ("To", to)]
    if cc:
        headers.append(("Cc", cc))
    headers.extend(extra_headers.items() if isinstance(extra_headers, Mapping) else extra_headers)
    payload = dict(payload)
    payload["headers"] = _headers(headers) + list(payload.get("headers", []))
    _number(payload, "")
    text = body_text.decode(charset, "replace") if isinstance(body_text, bytes) else (body_text or "")
    return {"id": message_id, "threadId": thread_id or message_id, "labelIds": list(labels),
            "snippet": " ".join(text.split())[:100], "historyId": str(history_id),
            "internalDate": str(int(sent_at.timestamp() * 1000)), "payload": payload,
            "sizeEstimate": 800 + sum(size for _, size in attachments) + len(text)}


def thread_json(thread_id: str, messages: Sequence[dict], history_id: int | None = None) -> dict:
    """One Gmail Thread resource: `messages` (from `message_json`) get `threadId` set; the thread's `historyId`
    is the largest of its messages' unless given. Items that are not objects are passed through as they are (for
    tests of malformed input)."""
    messages = [{**message, "threadId": thread_id} if isinstance(message, dict) else message for message in messages]
    objects = [message for message in messages if isinstance(message, dict)]
    newest = max((int(message.get("historyId", 1)) for message in objects), default=1)
    return {"id": thread_id, "historyId": str(history_id or newest),
            "snippet": objects[-1].get("snippet", "") if objects else "", "messages": messages}


def _headers(pairs: Iterable[tuple[str, str]]) -> list[dict]:
    return [{"name": name, "value": value} for name, value in pairs]


def _number(part: dict, part_id: str) -> None:
    """Gmail's partIds: "" for the top part, then "0", "1", and "0.0", "0.1" below a child."""
    part["partId"] = part_id
    for index, child in enumerate(part.get("parts", [])):
        _number(child, f"{part_id}.{index}" if part_id else str(index))
