"""The chat transcript's text rules: whose words a row holds, the offline summary, and what a forget redacts
in the transcript and its summaries (DESIGN.md invariant 5; `twin.lifecycle.forgetting` calls these, `twin.chat` writes
the transcript). Over `twin.store.chat`; no model, no recall."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from twin.memory import Memory
from twin.store import Store
from twin.store import chat as transcript
from twin.text.capture_rules import tokens
from twin.text.extractor import extract
from twin.text.sensitivity import find_secrets

SUMMARY_MAX_CHARS = 3000
"""The session summary keeps its newest part within this many characters (ours; it goes into every prompt)."""
VOICE_MARKS = ("[forwarded from ", "[in reply to ")
"""How a transcript line written by someone else starts (`Voice.line`): "[forwarded from Trudy] …"."""
def owner_words(text: str) -> str:
    """`text` (a transcript row) without the lines someone else wrote (`VOICE_MARKS`). Pure."""
    return "\n".join(line for line in text.split("\n") if not line.startswith(VOICE_MARKS))


def offline_summary(previous: str, messages: list[tuple[str, str]]) -> str:
    """The extractive summary (no model): `previous` plus up to 12 third-person points the offline extractor finds
    in what the owner said in `messages` (`(role, text)`; redacted rows are left out), newest
    `SUMMARY_MAX_CHARS` kept. Lines someone else wrote (forwarded, replied to) are left out: they are not what
    the owner said."""
    owner_said = " ".join(owner_words(text) for role, text in messages if role == "owner" and text != REDACTED)
    points = [c.content for c in extract(owner_said, limit=12)] if owner_said.strip() else []
    merged = "\n".join(line for line in [previous, *points] if line)
    return merged[-SUMMARY_MAX_CHARS:]


# -- forgetting (DESIGN.md invariant 5; called by twin.lifecycle.forgetting) ---------------------------------------------
REDACTED = "[forgotten]"
"""What a transcript row's text becomes when what it held is forgotten (the row stays for the state machine)."""
SUMMARY_REBUILD_ROWS = 40
"""Rows folded per step when a summary is rebuilt offline (the default compaction folds 50 − 10 = 40)."""
_LEARNED_FROM = re.compile(r"^telegram:(?P<chat>[^/\s]+)/message/(?P<row>\d+)$")
"""A chat-learned memory's `captured_from`: the transcript row it was learned from."""


def _secret_values(memories: list[Memory]) -> set[str]:
    return {m.content[s.start:s.end] for m in memories for s in find_secrets(m.content) if s.end - s.start >= 4}


def _distinctive(content: str) -> frozenset[str]:
    """The words a row must hold to count as saying `content` (its content words but "owner", 3+ characters)."""
    return frozenset(t for t in tokens(content) if t != "owner" and len(t) >= 3)


def mentions(text: str, content: str) -> bool:
    """True when `text` says what the memory `content` says, by its words: every distinctive word (at least two),
    or for a memory with fewer the whole content, case-insensitively ("my bike lock code is 4512" mentions
    "Owner's bike lock code is 4512."). Pure."""
    need = _distinctive(content)
    if len(need) >= 2:
        return need <= tokens(text)
    return " ".join(content.casefold().split()).rstrip(".") in " ".join(text.casefold().split())


def rows_holding(store: Store, being: str, memories: list[Memory]) -> dict[int, str]:
    """`{row id: chat id}` of the transcript rows of `being` that hold what `memories` say (read-only): the owner
    row a chat-learned memory was learned from (`captured_from` = `telegram:<chat>/message/<row id>`), twin rows
    that showed one (`shown_memories`), rows of any chat holding one's secret value (`find_secrets`), and rows
    of a chat-learned memory's own chat that mention it (`mentions`). Rows already redacted are left out."""
    ids = {m.id for m in memories}
    secrets = _secret_values(memories)
    learned_from = {int(match["row"]) for m in memories
                    if (match := _LEARNED_FROM.match(str(m.provenance.get("captured_from", ""))))}
    by_chat: dict[str, list[frozenset[str] | str]] = {}
    for m in memories:
        if m.source.startswith("telegram:"):
            by_chat.setdefault(m.source.split(":", 1)[1], []).append(m.content)
    found: dict[int, str] = {}
    for row_id, chat_id, text, shown in transcript.unredacted_rows(store, being, REDACTED):
        if (row_id in learned_from or any(v in text for v in secrets)
                or (shown != "[]" and ids & set(json.loads(shown)))
                or any(mentions(text, content) for content in by_chat.get(chat_id, ()))):
            found[row_id] = chat_id
    return found


def rows_mentioning(store: Store, being: str, about: Callable[[str], bool]) -> dict[int, str]:
    """`{row id: chat id}` of the transcript rows of `being` whose text `about` says mentions the subject of a
    forget (`twin.text.about.Subject.mentions`; read-only). Rows already redacted are left out."""
    return {row_id: chat_id for row_id, chat_id, text, _ in transcript.unredacted_rows(store, being, REDACTED)
            if about(text)}


def rows_of_chats(store: Store, being: str, chat_ids: list[str]) -> dict[int, str]:
    """`{row id: chat id}` of every not yet redacted row of those chats (read-only)."""
    return {row_id: chat_id for chat_id in chat_ids
            for row_id, *_ in transcript.unredacted_rows(store, being, REDACTED, chat_id)}


def summaries_holding(store: Store, being: str, rows: dict[int, str], memories: list[Memory],
                      about: Callable[[str], bool] | None = None) -> list[str]:
    """Chat ids whose summary must be rebuilt (read-only): one of `rows` was folded into it, or it holds a
    secret value of `memories`, mentions one of them (`mentions`), or `about` says it mentions the subject of a
    forget (`twin.text.about.Subject.mentions`)."""
    secrets = _secret_values(memories)
    out = []
    for chat_id, summary, upto in transcript.summaries(store, being):
        if (any(r <= upto for r, c in rows.items() if c == chat_id) or any(v in summary for v in secrets)
                or any(mentions(summary, m.content) for m in memories)
                or (about is not None and about(summary))):
            out.append(chat_id)
    return sorted(out)


def redact_rows(store: Store, row_ids: list[int], forgotten: set[int]) -> None:
    """Replace the text of `row_ids` with `REDACTED` in place, drop `forgotten` memory ids from their
    `shown_memories`, and move an answered owner row to `learned` (nothing is left to teach). Call inside the
    caller's transaction; sets the scrub marker (the old text stays in WAL pages until the scrub)."""
    for row_id in row_ids:
        transcript.redact_row(store, row_id, REDACTED, forgotten)
    if row_ids:
        store.mark_scrub_due()


def rebuild_summary(store: Store, being: str, chat_id: str) -> None:
    """Rebuild the chat's summary offline from its (redacted) rows up to `summarised_up_to`, `SUMMARY_REBUILD_ROWS`
    at a time (`offline_summary`): a forget never calls a model. Call inside the caller's transaction."""
    up_to = transcript.summarised_up_to(store, being, chat_id)
    if up_to is None:
        return
    rows = transcript.messages_up_to(store, being, chat_id, up_to)
    summary = ""
    for start in range(0, len(rows), SUMMARY_REBUILD_ROWS):
        summary = offline_summary(summary, [(r[0], r[1]) for r in rows[start:start + SUMMARY_REBUILD_ROWS]])
    transcript.replace_summary_text(store, being, chat_id, summary)
    store.mark_scrub_due()
