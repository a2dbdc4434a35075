"""Forgetting: the one home of "remove these memories and leave nothing behind" (DESIGN.md invariant 5).

Two steps, because the callers hold their own transactions (a caller's `Store.atomic()` holds both):

1. `remove_memories(store, ids)`, inside the caller's transaction: the rows go, and with them (triggers and
   cascades) their FTS entries, vectors (a tombstone tells the index writer to overwrite the vector in the index
   before its next checkpoint), edges and edge markers; the scrub marker is set. Every path that removes
   memories calls it: `twin forget`, Telegram's `/forget`, a watched file gone (`forget_source`), a document or
   thread re-learned (`learn.learn_document`), the dream's merge (`lifecycle.merge_pair`).
2. `Store.scrub_deleted_text()` after the commit: the forgotten words leave the FTS segments, the WAL is
   truncated; freed pages are zeroed by `secure_delete`. It costs ~0.1 s at 100k memories, so a burst is
   coalesced: an explicit forget scrubs at once, the workers ask for one `scrub_store` job behind the queued
   removals (`twin.workers.bus.Bus.request_scrub`), and the supervisor asks again while the marker is set.

An explicit forget (`plan` then `carry_out`, or `forget` by ids) also reaches the copies outside `memories`:
transcript rows that hold what the memories said are redacted in place and the chat summaries rebuilt offline
(`twin.chat`), and forgetting a whole source clears its connector state (an email thread's subject and sender;
a file's manifest entry: deleted when the file is gone, else kept as `skipped` so the file is learned again only
when it changes). `plan` changes nothing: it is the dry run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from twin import ingest
from twin import transcript as chat
from twin.activity import Activity, naming, unname
from twin.memory import Memory
from twin.namespaces import DEFAULT_NAMESPACE
from twin.outside_text import clean_name
from twin.store import Store, edges, email_threads, manifest
from twin.store import chat as transcript
from twin.store.ids import DEFAULT_SCOPE, Namespaces
from twin.store.manifest import FORGOTTEN_FILE_REASON
from twin.text.about import Subject
from twin.text.source_pattern import SourcePattern

__all__ = ["FORGOTTEN_FILE_REASON", "ForgetPlan", "carry_out", "forget", "plan"]


@dataclass
class ForgetPlan:
    """What a forget removes, per table (read-only until `carry_out`). `memories` in id order; `vectors` and
    `edges` are row counts (each vector is also one index entry); `transcript_rows` `{row id: chat id}`;
    `summaries`, `email_threads`, `manifest_entries` the chat ids, thread ids and file paths touched; `staged` and
    `diary_lines` the ids of staged items and of diary lines that name the source (`twin.activity.naming`)."""

    being: str
    memories: list[Memory] = field(default_factory=list)
    vectors: int = 0
    edges: int = 0
    transcript_rows: dict[int, str] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    email_threads: list[str] = field(default_factory=list)
    manifest_entries: list[str] = field(default_factory=list)
    staged: list[int] = field(default_factory=list)
    diary_lines: list[int] = field(default_factory=list)
    about: str | None = None
    by_part: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """For `--about`: the memories that mention only parts of the name, with the parts they mention alone."""

    @property
    def empty(self) -> bool:
        """True when nothing would be removed."""
        return not (self.memories or self.transcript_rows or self.summaries or self.email_threads
                    or self.manifest_entries or self.staged or self.diary_lines)

    def counts(self) -> dict[str, int]:
        """`{memories, fts_rows, vectors, index_entries, edges, transcript_rows, summaries, email_threads,
        manifest_entries, staged_items, diary_lines}` counts."""
        return {"memories": len(self.memories), "fts_rows": len(self.memories), "vectors": self.vectors,
                "index_entries": self.vectors, "edges": self.edges, "transcript_rows": len(self.transcript_rows),
                "summaries": len(self.summaries), "email_threads": len(self.email_threads),
                "manifest_entries": len(self.manifest_entries), "staged_items": len(self.staged),
                "diary_lines": len(self.diary_lines)}

    def to_dict(self, reveal_sensitive: bool = False) -> dict:
        """The JSON shape: the counts, the memories (`Memory.shown(reveal_sensitive).to_dict()`: a sensitive one's
        text only when `reveal_sensitive`), and the rows, chats, threads, paths; for `--about` each memory also
        says what it `matched` (`"whole"`, or the parts of the name it mentions alone)."""
        memories = [m.shown(reveal_sensitive).to_dict() for m in self.memories]
        if self.about is not None:
            for m in memories:
                m["matched"] = list(self.by_part[m["id"]]) if m["id"] in self.by_part else "whole"
        return {"counts": self.counts(), "memories": memories, "about": self.about,
                "transcript_rows": [{"id": r, "chat_id": c} for r, c in sorted(self.transcript_rows.items())],
                "summaries": self.summaries, "email_threads": self.email_threads,
                "manifest_entries": self.manifest_entries, "staged_items": self.staged,
                "diary_lines": self.diary_lines}

    def line(self) -> str:
        """What it removes in words, without any memory text: "2 memories (2 full-text rows), 2 vectors, 1 edge,
        3 transcript rows, 1 chat summary" (`counts_line` of its counts)."""
        return counts_line(self.counts())


def counts_line(c: dict[str, int]) -> str:
    """Counts per table (`ForgetPlan.counts`, or the `removed` of an API's forget answer) in words, without any
    memory text: "2 memories (2 full-text rows), 2 vectors, 1 edge"; zero counts but the memories' left out."""
    parts = [f"{c['memories']} memor{'y' if c['memories'] == 1 else 'ies'} ({c['fts_rows']} full-text "
             f"row{'' if c['fts_rows'] == 1 else 's'})"]
    for key, one, many in (("vectors", "vector", "vectors"), ("edges", "edge", "edges"),
                           ("transcript_rows", "transcript row", "transcript rows"),
                           ("summaries", "chat summary", "chat summaries"),
                           ("email_threads", "email thread row", "email thread rows"),
                           ("manifest_entries", "file manifest entry", "file manifest entries"),
                           ("staged_items", "item waiting to be learned", "items waiting to be learned"),
                           ("diary_lines", "diary line naming it", "diary lines naming it")):
        if c[key]:
            parts.append(f"{c[key]} {one if c[key] == 1 else many}")
    return ", ".join(parts)


def remove_memories(store: Store, memory_ids: list[int]) -> list[int]:
    """Delete the memories `memory_ids` (row, FTS entry, vector and index tombstone, edges, edge marker; the scrub
    marker is set by trigger) inside the caller's transaction. Returns the ids that existed. The text leaves the
    files only at the next `Store.scrub_deleted_text()`, which the caller runs or requests."""
    return store.remove_memories(memory_ids)


def _select_source(store: Store, being: str, source: str, namespaces: Namespaces, exact: bool) -> list[int]:
    """Ids of `being`'s memories in `namespaces` (None: every one) from `source`: exact, or every source that starts
    with it when it ends in `*` and not `exact` (`twin.text.source_pattern`)."""
    pattern = SourcePattern.of(source, exact)
    if pattern.prefix:
        return store.ids_with_source_prefix(being, pattern.text, namespaces)
    return sorted(store.ids_by_source(being, pattern.text, namespaces))


def _select_about(store: Store, being: str, subject: Subject, namespaces: Namespaces) -> dict[int, tuple[str, ...]]:
    """`{id: parts}` of `being`'s memories in `namespaces` (any status) that mention `subject` (`twin.text.about`):
    `()` for the whole of it, else the parts of the name they mention alone."""
    found: dict[int, tuple[str, ...]] = {}
    for mid, content in store.fts_all(being, subject.fts_query(), namespaces):
        mention = subject.match(content)
        if mention is not None:
            found[mid] = mention.parts
    return found


def _source_state(store: Store, being: str, source: str, exact: bool) -> tuple[list[str], list[str]]:
    """`(email thread ids, file paths)` of the connector state `source` (exact, or `…*` unless `exact`) names."""
    pattern = SourcePattern.of(source, exact)
    threads = [t for t in email_threads.thread_ids(store, being) if pattern.matches(f"email:{t}")]
    paths = [p for p in manifest.all_paths(store, being) if pattern.matches(f"file:{clean_name(p)}")]
    return threads, paths


def files_of(store: Store, being: str, memories: list) -> list[str]:
    """The `files_manifest` paths of the files `memories` (`Memory` rows) were learned from (`file:<path>`
    sources): a forget of those memories by id (a project's or a person's whole scope) marks them as forgotten too,
    so a file whose memories went is learned again when it changes, not kept "indexed" with nothing of it left.
    Read-only."""
    sources = {m.source for m in memories if m.source.startswith("file:")}
    return [p for p in manifest.all_paths(store, being) if f"file:{clean_name(p)}" in sources]


def plan(store: Store, being: str, *, ids: list[int] | None = None, source: str | None = None,
         about: str | None = None, whole: bool = False, namespaces: Namespaces = DEFAULT_SCOPE,
         exact: bool = False) -> ForgetPlan:
    """What forgetting `ids`, a whole `source` (`file:/path`, `email:<thread>`, `telegram:<chat>`, `browser`;
    `file:/folder/*` for every source that starts so) or everything `about` a person or thing would remove, per
    table: the memories, transcript rows, chat summaries and staged items that mention it (`twin.text.about.Subject`:
    the whole of it, or a part of the name alone unless `whole`; `ForgetPlan.by_part` lists the latter).
    Only memories of `namespaces` (`twin.namespaces.scope`'s tuple; None: every namespace) are planned, ids
    included; the other copies a source or a subject has outside memories (transcript rows that mention it, staged
    items, connector state, diary lines) belong to the connectors, which write `default`, and are planned only when
    `default` is in `namespaces`; transcript rows holding a planned memory's text always are.
    With `exact`, `source` is that one source even when it ends in `*` (a memory's own source, as the page forgets
    it: `twin.text.source_pattern`). Read-only: this is the dry run. Raises `ValueError` for an `about` with no word
    in it."""
    subject = Subject(about, parts=not whole) if about is not None else None
    selected: list[int] = list(ids or [])
    if source is not None:
        selected += _select_source(store, being, source, namespaces, exact)
        if not selected and clean_name(source) != source:  # typed raw; stored as `clean_name` writes names
            source = clean_name(source)
            selected += _select_source(store, being, source, namespaces, exact)
    about_ids = _select_about(store, being, subject, namespaces) if subject is not None else {}
    found = store.get_many(selected + list(about_ids))
    memories = [found[i] for i in sorted(found) if found[i].being_id == being
                and (namespaces is None or found[i].namespace in namespaces)]
    mids = [m.id for m in memories]
    plain = set(selected)
    out = ForgetPlan(being, memories, about=subject.text if subject is not None else None,
                     by_part={i: about_ids[i] for i in mids if about_ids.get(i) and i not in plain})
    out.vectors = store.count_vectors(mids)
    out.edges = edges.count_touching(store, mids)
    about_subject = subject.mentions if subject is not None else None
    rows = chat.rows_holding(store, being, memories)
    if namespaces is not None and DEFAULT_NAMESPACE not in namespaces:  # the connectors' copies stay
        out.transcript_rows = dict(sorted(rows.items()))
        out.summaries = chat.summaries_holding(store, being, out.transcript_rows, memories, None)
        return out
    if about_subject is not None:
        rows.update(chat.rows_mentioning(store, being, about_subject))
    if source is not None and source.startswith("telegram:"):
        rows.update(chat.rows_of_chats(store, being, _chats_of(store, being, source[len("telegram:"):], exact)))
    out.transcript_rows = dict(sorted(rows.items()))
    out.summaries = chat.summaries_holding(store, being, out.transcript_rows, memories, about_subject)
    if source is not None:
        out.email_threads, out.manifest_entries = _source_state(store, being, source, exact)
    out.staged = ingest.matching(store, being, source=source, mentions=about_subject, exact=exact)
    out.diary_lines = naming(store, being, source, about_subject, exact=exact)
    return out


def _chats_of(store: Store, being: str, pattern: str, exact: bool) -> list[str]:
    """The chat ids of `being`'s transcript that `pattern` names: exact, or every one that starts so (`…*`, unless
    `exact`: `twin.text.source_pattern`)."""
    named = SourcePattern.of(pattern, exact)
    return [c for c in transcript.chat_ids(store, being) if named.matches(c)]


def carry_out(store: Store, activity: Activity | None, todo: ForgetPlan) -> ForgetPlan:
    """Remove what `todo` lists in one transaction (memories, transcript rows redacted, summaries rebuilt offline,
    email thread rows cleared but for the id of their last message, manifest entries dropped or, for a file that
    still exists, marked `skipped`, diary lines that name the source rewritten to "a forgotten file"), then scrub
    (`Store.scrub_deleted_text`). One `forgot` diary line naming ids
    and counts, never text. Returns the plan of what was actually removed (memories gone meanwhile left out)."""
    forgotten = {m.id for m in todo.memories}
    with store.atomic():
        gone = set(remove_memories(store, sorted(forgotten)))
        ingest.consume(store, todo.staged)
        unname(store, todo.diary_lines)
        chat.redact_rows(store, list(todo.transcript_rows), forgotten)
        for chat_id in todo.summaries:
            chat.rebuild_summary(store, todo.being, chat_id)
        for thread_id in todo.email_threads:
            email_threads.clear(store, todo.being, thread_id)
        for path in todo.manifest_entries:
            if os.path.lexists(path):
                manifest.mark_forgotten(store, todo.being, path)
            else:
                manifest.delete(store, todo.being, path)
        if not todo.empty:
            store.mark_scrub_due()
    done = replace(todo, memories=[m for m in todo.memories if m.id in gone])
    if not done.empty:
        store.scrub_deleted_text()
    if activity is not None and not done.empty:
        shown = ", ".join(f"#{m.id}" for m in done.memories[:20]) + (" …" if len(done.memories) > 20 else "")
        activity.record("forgot", f"Forgot {len(done.memories)} memory(ies){': ' + shown if shown else ''}; removed "
                                  f"{done.line()}.")
    return done


def forget(store: Store, activity: Activity | None, being: str, memory_ids: list[int],
           namespaces: Namespaces = None) -> ForgetPlan:
    """Hard-forget memories by id, with every copy `plan` finds (transcript rows, summaries), scrubbed at once.
    Ids that do not exist (or belong to another being, or to a namespace outside `namespaces`; None: every one)
    are simply not in the result."""
    return carry_out(store, activity, plan(store, being, ids=memory_ids, namespaces=namespaces))


def scrub_if_due(store: Store) -> dict | None:
    """`Store.scrub_deleted_text()` when the scrub marker is set (a burst of removals, coalesced); else None."""
    return store.scrub_deleted_text() if store.scrub_due() else None
