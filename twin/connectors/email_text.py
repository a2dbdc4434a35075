"""The pure `to_text` part of the Gmail connector (STYLE.md 3): one thread as `users.threads.get(format="full")`
returns it -> `EmailThread` (senders, dates, trimmed bodies, attachment names, whether the owner owes a reply)
-> the text a model reads (`thread_text`); offline, `twin.connectors.email_summary` makes third-person sentences of it.

No I/O: attachments are only named, never fetched. Decoding follows LIBRARY_NOTES §4 (walk `payload.parts`,
`body.data` is base64url without padding) and the stdlib `email` package (RFC 2047 headers, RFC 5322 addresses
and dates). Email text is untrusted data: it is quoted, never interpreted, and cannot change the output's shape.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import logging
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.errors import HeaderParseError
from email.header import decode_header
from email.message import Message
from email.utils import collapse_rfc2231_value, getaddresses, parsedate_to_datetime
from html.parser import HTMLParser

from twin.connectors.email_prose import guess_language
from twin.connectors.file_text import html_to_text
from twin.connectors.needs_reply import automated_reason, clip, phishing_signs, reply_reason
from twin.memory import format_time, strip_controls

log = logging.getLogger(__name__)

DEFAULT_SKIP_LABELS = ("SPAM", "TRASH", "DRAFT")
"""Gmail system labels whose messages are not read: junk, deleted, and not yet sent."""
MAX_BODY_CHARS = 20_000
"""Longest trimmed body kept per message (characters); longer ones are cut."""
MAX_TEXT_BYTES = 4 * MAX_BODY_CHARS
"""Most bytes of one text/plain part decoded (enough for `MAX_BODY_CHARS` before trimming): a 5 MB body costs
this much, not 5 MB."""
MAX_HTML_BYTES = 10 * MAX_BODY_CHARS
"""Most bytes of one text/html part decoded (markup outweighs the visible text)."""
MAX_PARTS = 200
"""Most MIME parts walked per message (a deeply nested or huge multipart is cut there)."""
REASON_MAX_CHARS = 160
"""Longest `reply_reason` (characters)."""


class MalformedThread(ValueError):
    """The JSON is not a Gmail thread (no string `id`, no `messages` list): a caller bug or an API change, not a
    message to skip."""


@dataclass
class EmailMessage:
    """One message of a thread. `sender_name` is the decoded display name, else the address's local part;
    addresses are lower-case; `sent_at` is UTC ISO-8601 (`2026-11-28T09:00:00Z`); `body` is trimmed text (quotes,
    signatures and controls removed, at most `MAX_BODY_CHARS`); `attachments` are file names, never read;
    `language` the body's (`email_prose.guess_language`); `automated` why a machine sent it (None for a person:
    `needs_reply.automated_reason`); `phishing` its phishing signs (`needs_reply.phishing_signs`, [] for none)."""

    message_id: str
    sender_name: str
    sender_address: str
    to: list[str]
    cc: list[str]
    sent_at: str
    body: str
    attachments: list[str] = field(default_factory=list)
    from_owner: bool = False
    language: str = "en"
    automated: str | None = None
    phishing: list[str] = field(default_factory=list)


@dataclass
class EmailThread:
    """A thread with its messages oldest first. `subject` is the first message's, decoded, without `Re:`/`Fwd:`
    prefixes; `needs_reply`/`reply_reason` follow the rule in `parse_thread`; `labels` the Gmail label ids (never
    names: `twin.connectors.gmail.thread_item` adds those) of the messages kept, sorted (what a `gmail_label`
    binding of a project matches: `twin.ingest.bound_namespace`)."""

    thread_id: str
    subject: str
    messages: list[EmailMessage]
    needs_reply: bool = False
    reply_reason: str | None = None
    labels: tuple[str, ...] = ()


@dataclass
class _Parsed:
    message: EmailMessage
    subject: str


@dataclass
class _Body:
    text: str
    attachments: list[str]
    calendar: bool
    links: list[tuple[str, str]]


# --- the thread ------------------------------------------------------------------------------------------------

def parse_thread(thread: dict, owner_addresses: Collection[str],
                 skip_labels: Collection[str] = DEFAULT_SKIP_LABELS) -> EmailThread | None:
    """Parse one `threads.get(format="full")` response. Pure; never fetches attachments.

    Messages carrying a label in `skip_labels` are left out; None when no message is left. A message is from the
    owner when its sender is one of `owner_addresses` (case-insensitive) or Gmail labelled it `SENT`. A single
    odd message (not an object, no payload, no usable date) is skipped with a warning; an undecodable part is
    skipped or decoded with replacement characters.

    Needs a reply (our rule, `twin.connectors.needs_reply`): the newest message is not from the owner; an owner
    address is in its `To` (Cc or Bcc only does not count); no machine sent it (`automated_reason`: lists, bulk,
    auto-replies, calendar invitations, role senders and their confirmations); it shows no signs of phishing;
    and its trimmed body asks the owner something (`asks_owner`: a question or a request, in the mail's
    language). `reply_reason` is the first such sentence, at most `REASON_MAX_CHARS`. A later owner message
    makes it the newest, so answered threads never need a reply.

    Raises `MalformedThread` when `thread` is not a dict with a non-empty string `id` and a `messages` list.
    """
    if not isinstance(thread, dict):
        raise MalformedThread(f"a Gmail thread is a JSON object, got {type(thread).__name__}")
    thread_id, raw_messages = thread.get("id"), thread.get("messages")
    if not isinstance(thread_id, str) or not thread_id:
        raise MalformedThread("the thread has no string 'id'")
    if not isinstance(raw_messages, list):
        raise MalformedThread(f"thread {thread_id} has no 'messages' list")
    owners = {address.strip().lower() for address in owner_addresses if address.strip()}
    skip = set(skip_labels)
    parsed: list[_Parsed] = []
    labels: set[str] = set()
    for raw in raw_messages:
        if isinstance(raw, dict) and skip & set(_labels(raw)):
            continue
        item = _parse_message(raw, owners) if isinstance(raw, dict) else None
        if item is None:
            log.warning("gmail: skipped an unreadable message in thread %s", thread_id)
        else:
            parsed.append(item)
            labels.update(_labels(raw))
    if not parsed:
        return None
    parsed.sort(key=lambda item: item.message.sent_at)
    newest = parsed[-1].message
    reason = _reply_reason(newest, owners)
    return EmailThread(thread_id, _clean_subject(parsed[0].subject), [item.message for item in parsed],
                       reason is not None, reason, tuple(sorted(labels)))


def _labels(raw: dict) -> list[str]:
    labels = raw.get("labelIds")
    return [label for label in labels if isinstance(label, str)] if isinstance(labels, list) else []


def _parse_message(raw: dict, owners: set[str]) -> _Parsed | None:
    payload = raw.get("payload")
    if not isinstance(payload, dict):
        return None
    headers = _headers(payload)
    sent_at = _sent_at(raw.get("internalDate"), headers.get("date"))
    if sent_at is None:
        return None
    sender_name, sender_address = _sender(headers.get("from", ""))
    if not sender_name:
        sender_name = sender_address.split("@")[0] or "unknown sender"
    body = _body(payload)
    from_owner = sender_address in owners or "SENT" in _labels(raw)
    message = EmailMessage(
        message_id=str(raw.get("id") or ""), sender_name=sender_name[:100], sender_address=sender_address,
        to=[address for _, address in _addresses(headers.get("to", ""))],
        cc=[address for _, address in _addresses(headers.get("cc", ""))],
        sent_at=sent_at, body=body.text, attachments=body.attachments, from_owner=from_owner,
        language=guess_language(body.text),
        automated=None if from_owner else automated_reason(headers, sender_address, body.text, body.calendar),
        phishing=[] if from_owner else phishing_signs(headers, sender_address, body.text, body.links))
    return _Parsed(message, _decode_words(headers.get("subject", "")))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _headers(part: dict) -> dict[str, str]:
    """Lower-case name -> value (control characters and lone surrogates dropped: the stdlib's header parsers
    raise on them); a repeated header's values joined with ", "."""
    out: dict[str, str] = {}
    headers = part.get("headers")
    for header in headers if isinstance(headers, list) else []:
        if isinstance(header, dict) and isinstance(header.get("name"), str) and isinstance(header.get("value"), str):
            name, value = header["name"].lower(), _SURROGATE.sub("", strip_controls(header["value"]))
            out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def _sent_at(internal_date: object, date_header: str | None) -> str | None:
    """`internalDate` (ms since the epoch, a string) as UTC ISO-8601, else the RFC 5322 Date header (a date
    without a zone taken as UTC), else None."""
    try:
        return format_time(datetime.fromtimestamp(int(str(internal_date)) / 1000, UTC))
    except (TypeError, ValueError, OverflowError, OSError):
        pass
    try:
        moment = parsedate_to_datetime(date_header or "")
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return format_time(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def _decode_words(value: str) -> str:
    """An RFC 2047 header value decoded (unknown charsets as UTF-8, bad bytes replaced), controls stripped and
    whitespace collapsed."""
    text = value
    if "=?" in value:
        try:
            text = "".join(chunk if isinstance(chunk, str) else chunk.decode(_codec(charset), "replace")
                           for chunk, charset in decode_header(value))
        except (HeaderParseError, ValueError, UnicodeError):
            text = value
    return " ".join(strip_controls(text).split())


_ROUTE_ADDRESS = re.compile(r"<\s*([^<>\s@]+@[^<>\s@]+)\s*>\s*$")


def _sender(value: str) -> tuple[str, str]:
    """`(display name, lower-case address)` of a From header. The address is the one in the closing `<…>` when
    there is one (where mail is really from), so a display name that is itself an address ("owner@example.com
    <attacker@evil.example>") is only a name and can never make a message the owner's; else the first mailbox
    `getaddresses` finds; `("", "")` when there is none."""
    route = _ROUTE_ADDRESS.search(value)
    if route is not None:
        name = _decode_words(value[:route.start()]).strip("\"' ")
        return name, route.group(1).strip().lower()
    found = _addresses(value)
    return found[0] if found else ("", "")


def _addresses(value: str) -> list[tuple[str, str]]:
    """`(decoded display name, lower-case address)` of each mailbox in an address header (RFC 5322 via
    `getaddresses`; names decoded after parsing so a decoded comma cannot split one)."""
    return [(_decode_words(name).strip("\"' "), address.strip().lower())
            for name, address in getaddresses([value]) if "@" in address]


_SUBJECT_PREFIX = re.compile(r"^(?:\s*(?:re|fwd?|aw|wg)\s*(?:\[\d+\])?\s*:)+\s*", re.IGNORECASE)


def _clean_subject(subject: str) -> str:
    return _SUBJECT_PREFIX.sub("", subject).strip() or "(no subject)"


# --- bodies ----------------------------------------------------------------------------------------------------

def _body(payload: dict) -> _Body:
    """The trimmed text of a message (text/plain preferred, else text/html converted), its attachment names,
    whether it carries a calendar (a text/calendar or application/ics part, or an .ics file) and its links
    (`(href, anchor text)` from the HTML part, `(url, "")` for a URL in the plain text)."""
    plain: list[str] = []
    html: list[str] = []
    attachments: list[str] = []
    calendar = False
    for part in _leaves(payload):
        body = part.get("body") if isinstance(part.get("body"), dict) else {}
        mime = str(part.get("mimeType") or "").lower()
        calendar = calendar or mime in ("text/calendar", "application/ics")
        if part.get("filename") or body.get("attachmentId"):
            attachments.append(_attachment_name(part, mime))
            calendar = calendar or attachments[-1].lower().endswith((".ics", ".vcs"))
        elif mime == "text/plain" and sum(map(len, plain)) < MAX_TEXT_BYTES:
            plain.append(_part_text(part, body, MAX_TEXT_BYTES))
        elif mime == "text/html" and sum(map(len, html)) < MAX_HTML_BYTES:
            html.append(_cut_html_quote(_part_text(part, body, MAX_HTML_BYTES)))
    links = [link for page in html for link in _html_links(page)]
    if any(text.strip() for text in plain):
        text = "\n\n".join(plain)
        links += [(url, "") for url in _URL.findall(text)[:MAX_LINKS]]
    else:
        text = "\n\n".join(html_to_text(page)[0] for page in html if page.strip())
    return _Body(_trim(strip_controls(text))[:MAX_BODY_CHARS].strip(), list(dict.fromkeys(attachments)), calendar,
                 links[:MAX_LINKS])


MAX_LINKS = 50
"""Links of a message read for phishing signs."""
_URL = re.compile(r"https?://[^\s<>\"')\]]+")


class _LinkParser(HTMLParser):
    """Collects `(href, anchor text)` of the `<a href>` elements of a page (stdlib parser; at most `MAX_LINKS`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a" and len(self.links) < MAX_LINKS:
            self._href, self._text = dict(attrs).get("href") or None, []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, " ".join("".join(self._text).split())[:200]))
            self._href = None


def _html_links(page: str) -> list[tuple[str, str]]:
    parser = _LinkParser()
    parser.feed(page)
    parser.close()
    return parser.links


def _leaves(payload: dict) -> Iterator[dict]:
    """The non-container parts in document order (multipart/* and message/rfc822 descended), at most
    `MAX_PARTS` parts walked."""
    stack, walked = [payload], 0
    while stack and walked < MAX_PARTS:
        part = stack.pop()
        walked += 1
        children = part.get("parts")
        if isinstance(children, list) and children:
            stack.extend(child for child in reversed(children) if isinstance(child, dict))
        else:
            yield part


def _attachment_name(part: dict, mime: str) -> str:
    name = part.get("filename") if isinstance(part.get("filename"), str) else ""
    if not name:
        header = Message()
        for key, value in _headers(part).items():
            if key in ("content-disposition", "content-type"):
                header[key] = value
        name = header.get_filename() or collapse_rfc2231_value(header.get_param("name") or "")
    name = _decode_words(name)[:120]
    return name or f"unnamed {mime or 'part'}"


def _part_text(part: dict, body: dict, max_bytes: int) -> str:
    """A text part's `body.data` decoded: base64url with or without padding, at most `max_bytes` bytes (a cut
    multi-byte character dropped), in the part's charset. Garbage data yields ""."""
    data = body.get("data")
    if not isinstance(data, str):
        return ""
    limit = (max_bytes // 3 + 1) * 4  # a multiple of 4 base64 characters: a clean prefix to decode
    encoded = data[:limit].strip().rstrip("=")
    try:
        raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return ""
    decoder = codecs.getincrementaldecoder(_charset(_headers(part).get("content-type", "")))(errors="replace")
    return decoder.decode(raw, final=len(data) <= limit)


def _charset(content_type: str) -> str:
    header = Message()
    header["Content-Type"] = content_type or "text/plain"
    return _codec(header.get_content_charset())


def _codec(charset: str | None) -> str:
    """A text codec for a MIME charset label: unknown or non-text ones -> utf-8; us-ascii and ISO-8859-1 ->
    windows-1252, as the WHATWG Encoding Standard maps those labels (mail mislabels cp1252 the same way)."""
    try:
        name = codecs.lookup(charset or "utf-8").name
        b"x".decode(name, "replace")  # rejects non-text codecs such as base64 or rot13
    except (LookupError, TypeError, ValueError):
        return "utf-8"
    return "cp1252" if name in ("ascii", "iso8859-1") else name


_HTML_QUOTE = re.compile(r"""<(?:div|blockquote)\b[^>]{0,500}?(?:class\s*=\s*["']?[^"'>]{0,200}gmail_quote"""
                         r"""|type\s*=\s*["']?cite|id\s*=\s*["']?(?:divRplyFwdMsg|appendonsend))""", re.IGNORECASE)


def _cut_html_quote(page: str) -> str:
    """HTML up to the quoted previous message: Gmail's `gmail_quote` div, Apple Mail's `<blockquote type=cite>`,
    Outlook's `divRplyFwdMsg`/`appendonsend`. A page cut mid-tag (at `MAX_HTML_BYTES`) loses the partial tag,
    which the parser would otherwise keep as text."""
    match = _HTML_QUOTE.search(page)
    page = page[:match.start()] if match else page
    last_open = page.rfind("<")
    return page[:last_open] if last_open > page.rfind(">") else page


# --- trimming --------------------------------------------------------------------------------------------------

_WROTE = re.compile(r"(?:on|le|am|el|il|op)\b.{0,250}\b(?:wrote|a écrit|schrieb|escribió|ha scritto|schreef)\s*:",
                    re.IGNORECASE)
_ORIGINAL = re.compile(r"-{2,}\s*original message\s*-{2,}", re.IGNORECASE)
_OUTLOOK_FROM = re.compile(r"\*?from:\*?\s", re.IGNORECASE)
_OUTLOOK_SENT = re.compile(r"\*?sent:\*?\s", re.IGNORECASE)
_SIGN_OFF = re.compile(r"(?:sent from my \w[\w ]{0,30}|sent from (?:yahoo mail|mail|outlook)\b[\w ]{0,30}"
                       r"|get outlook for \w[\w ]{0,30})[.!]?", re.IGNORECASE)


def _trim(text: str) -> str:
    """Body text without the quoted reply and the signature, whitespace collapsed per line, one blank line at
    most between paragraphs. The cut is the first of: an "On <date>, <name> wrote:" line (also wrapped over two
    lines, and its fr/de/es/it/nl forms), "-----Original Message-----", an Outlook "From: … Sent: …" block (or the
    underscore rule before it), the RFC 3676 signature delimiter "-- ", "Sent from my …", "Get Outlook for …".
    Lines starting with ">" (quoted text) are dropped wherever they are."""
    lines = [" ".join(line.split()) for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    kept: list[str] = []
    for i, line in enumerate(lines):
        if _starts_quote(line, lines[i + 1:i + 5]):
            break
        if not line.startswith(">"):
            kept.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _starts_quote(line: str, following: list[str]) -> bool:
    if line in ("--", "-- ") or _SIGN_OFF.fullmatch(line) or _ORIGINAL.fullmatch(line):
        return True
    low = line.lower()
    if low.startswith(("on ", "le ", "am ", "el ", "il ", "op ")) and (
            _WROTE.fullmatch(line) or (following and len(line) < 200 and _WROTE.fullmatch(f"{line} {following[0]}"))):
        return True
    if _OUTLOOK_FROM.match(line):
        return "sent:" in low or any(_OUTLOOK_SENT.match(nxt) for nxt in following)
    if len(line) >= 10 and set(line) == {"_"}:  # Outlook's rule above its "From: … Sent: …" block
        rest = [nxt for nxt in following if nxt]
        return bool(rest) and _starts_quote(rest[0], following[following.index(rest[0]) + 1:])
    return False


# --- needs a reply ---------------------------------------------------------------------------------------------

def _reply_reason(newest: EmailMessage, owners: set[str]) -> str | None:
    """The first question or request in `newest`'s body when the owner is in its To, did not write it, no machine
    sent it and it shows no phishing signs (see `parse_thread`)."""
    if newest.from_owner or not owners & set(newest.to) or newest.automated or newest.phishing:
        return None
    return reply_reason(newest.body, newest.language, REASON_MAX_CHARS)





# --- text for a model ------------------------------------------------------------------------------------------

def thread_text(thread: EmailThread, max_chars: int) -> str:
    """The text a model reads, at most `max_chars` characters: a header line
    `Email thread “<subject>” (<n> messages, <first date> to <last date>)`, then one line per message
    `From <name> <YYYY-MM-DD>: <body on one line>` ("From Owner" for the owner's), each followed by
    `Attachments: a.pdf, b.png (not read).` when it has some. Bodies are put on one line so no email text can
    start a line of its own. When it must cut, the newest messages are kept and a line says how many earlier
    ones were left out; a newest message too long on its own is cut at its end. `max_chars` <= 0 gives ""."""
    first, last = thread.messages[0].sent_at[:10], thread.messages[-1].sent_at[:10]
    count = len(thread.messages)
    span = f"{count} messages, {first} to {last}" if count > 1 else f"1 message, {first}"
    head = f"Email thread “{thread.subject}” ({span})"
    blocks = [_message_block(message) for message in thread.messages]
    text = "\n".join([head, *blocks])
    if len(text) <= max_chars:
        return text
    room = max_chars - len(head) - len(f"\n({count} earlier messages left out)\n")
    kept: list[str] = []
    for block in reversed(blocks):
        if len(block) + 1 > room:
            break
        kept.insert(0, block)
        room -= len(block) + 1
    if not kept and room > 40:
        kept = [clip(blocks[-1], room)]
    note = f"({count - len(kept)} earlier message{'s' if count - len(kept) != 1 else ''} left out)"
    return clip("\n".join([head, note, *kept]), max_chars)


def _message_block(message: EmailMessage) -> str:
    body = " ".join(message.body.split()) or "(no text)"
    block = f"From {display_name(message)} {message.sent_at[:10]}: {body}"
    if message.attachments:
        block += f"\nAttachments: {', '.join(message.attachments)} (not read)."
    return block


def display_name(message: EmailMessage) -> str:
    """How a message's writer is named in text for a model and in summaries: "Owner" for the owner; a stranger
    calling themselves Owner is shown with their address."""
    if message.from_owner:
        return "Owner"
    if message.sender_name.casefold().strip() == "owner":
        return f"{message.sender_name} ({message.sender_address})"
    return message.sender_name
