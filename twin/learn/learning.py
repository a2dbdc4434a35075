"""`learn()`: the one path every source uses to teach the twin (seed 001), and `forget()`.

Text is turned into candidate memories by the extractor, each is deduplicated by its content hash
within the being (DESIGN.md invariant 2: an exact duplicate reinforces the existing memory instead of
inserting) and stored in one transaction. Embedding happens later, in batches (seed 000): the new
memories are simply rows without a vector until the embedding worker flushes them.
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime

from twin import ingest
from twin.activity import Activity
from twin.learn.capture import Supersession, capture, related_memories, supersession_line
from twin.learn.capture_judge import COMPARED_PER_MEMORY, judge
from twin.learn.model_extractor import MODEL_CONFIDENCE, extract_with_model
from twin.lifecycle.forgetting import forget as forget_everywhere
from twin.lifecycle.forgetting import remove_memories
from twin.llm.provider import BudgetExhausted, ModelProvider, ProviderError, ProviderResting
from twin.memory import Memory, content_sha256, strip_controls, utc_now
from twin.namespaces import DEFAULT_NAMESPACE, checked_stored
from twin.profile import ProfileDelta, merge_into_profile
from twin.store import Store, manifest, state
from twin.store.ids import Namespaces
from twin.text.capture_rules import unworthy
from twin.text.extractor import MAX_PER_CALL, Candidate, extract
from twin.text.sensitivity import SENSITIVE, contains_secret

log = logging.getLogger("twin.learn")

OFFLINE_CONFIDENCE = 0.6
"""Provenance confidence of a memory written by the offline extractor (rules, no model)."""


NOTHING_FOUND = "no sentence in it states something to remember (questions, greetings and fragments are not kept)"
"""Why a text gave nothing when no rule named a sentence (`LearnResult.skipped`)."""


@dataclass
class LearnResult:
    """What one `learn()` call did: ids of new memories, of reinforced ones, of ones updated in place, of ones
    it removed or superseded, the reasons of rejected candidates, and whether the profile changed.

    The reasons, for `twin learn --json` and the diary: `supersessions` (one `Supersession` `{id, by, reason}`
    per memory hidden, including one a revived memory hid again), `update_reasons` (`{id: why it was updated in
    place}`) and `rejections` (`(content, reason)` for each candidate the gate rejected and each memory of the
    model that could not be made to keep the contract, `twin.learn.sentence_contract`); `rejected` holds the same
    reasons alone, in the same order; `skipped` why sentences were left out (or why the text gave nothing:
    `capture_rules.unworthy`'s reason, else `NOTHING_FOUND`); `unread` the text held more memories than one call
    keeps (seed 000: 12; a file `files_max_memories`): the rest was not read."""

    created: list[int] = field(default_factory=list)
    reinforced: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    superseded: list[int] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    profile_updated: bool = False
    unread: bool = False
    supersessions: list[Supersession] = field(default_factory=list)
    update_reasons: dict[int, str] = field(default_factory=dict)
    rejections: list[tuple[str, str]] = field(default_factory=list)

    def reject(self, content: str, reason: str) -> None:
        """Record one candidate not stored, with why."""
        self.rejected.append(reason)
        self.rejections.append((content, reason))

    @property
    def changed(self) -> bool:
        """True when memories were created, updated or removed (the embedder or index has work)."""
        return bool(self.created or self.removed or self.updated)


def source_type(source: str) -> str:
    """`'email:abc'` → `'email'`; `'muse'` → `'muse'`."""
    return source.split(":", 1)[0]


@dataclass
class Extraction:
    """Candidates for one text, the profile delta that came with them (empty offline), the provenance
    confidence of the path that made them (model 0.8, offline 0.6), and `(content, reason)` for each memory
    of the model dropped by the contract check (`twin.learn.sentence_contract`)."""

    candidates: list[Candidate]
    profile: ProfileDelta
    confidence: float
    dropped: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Why the offline extractor left sentences out ("sentence 2: a question"), never their text."""
    unread: bool = False
    """The text held more than `limit` memories (offline: one more was found; the model: it gave as many as it
    may): the rest was not read."""


def extract_for_learning(store: Store, activity: Activity | None, being: str, text: str, source: str,
                         provider: ModelProvider | None, *, limit: int = MAX_PER_CALL,
                         document_title: str | None = None, offline_text: str | None = None,
                         written_at: datetime | None = None, force: bool = False,
                         speaker: str | None = None) -> Extraction:
    """The model's extraction when a provider is configured, else (and whenever the model fails) the offline
    extractor's (seed 000: "on a model failure, [it] degrades"). The offline extractor reads `offline_text`
    when given (a connector's heuristic summary of what the model reads raw, e.g. an email thread), else
    `text`. `speaker`: the text was written by that person, not the owner (a forwarded or quoted chat message);
    both extractors write its facts as that person's claim. A failure writes one `model` activity line naming
    the source type and the reason, never the text; an exhausted budget says so once per UTC day; a provider
    resting after a failure falls back silently. Never raises for model trouble. `written_at` (aware, the
    owner's zone): when the text was written, on which the offline extractor resolves relative dates
    ("yesterday"); `force` keeps what its memorability floor would drop (`twin learn --force`); the reasons it
    left sentences out are in `skipped`.

    Secrets have one behaviour whatever the path (DESIGN.md invariant 8): found before any model call, the
    sentence or block holding each is learned locally by the offline extractor as a `sensitive` candidate with
    its value (`extract(..., only_secrets=True)`, first in the list), while the model reads the text with
    `[redacted]` in their place and its memories holding that placeholder are dropped (the same fact, once).
    Both read the text in Unicode's composed form (NFC: a letter and its combining accent as one character).

    Each memory of the model that breaks seed 000's contract and cannot be rewritten is dropped with one `model`
    line naming the source type and the reason ("Model memory from telegram not kept: in the second person
    ('du', German)."), never the text."""
    # composed form first (NFC): "I\u0301 live in Mu\u0308nchen" read its "I" as a word with an accent and became
    # "Owneŕ live in München" (a breaker run); every extractor, rule and memory sees one form of a letter
    text = unicodedata.normalize("NFC", text)
    offline_text = unicodedata.normalize("NFC", offline_text) if offline_text is not None else None
    if provider is not None:
        local = (extract(text, document_title=document_title, limit=limit, only_secrets=True, speaker=speaker)
                 if contains_secret(text) else [])
        try:
            answer = extract_with_model(provider, text, source, max_chars=provider.max_input_chars,
                                        document_title=document_title, limit=limit, speaker=speaker)
            if activity is not None:
                for _, reason in answer.dropped:
                    activity.record("model", f"Model memory from {source_type(source)} not kept: {reason}.")
            return Extraction((local + answer.candidates)[:max(limit, len(local))], answer.profile, MODEL_CONFIDENCE,
                              answer.dropped, unread=len(answer.candidates) >= limit)
        except BudgetExhausted as exc:
            _note_budget_once(store, activity, being, provider, str(exc))
        except ProviderResting:
            pass
        except ProviderError as exc:
            if activity is not None:
                activity.record("model", f"Model extraction failed for {source_type(source)} ({exc}); "
                                         "used the offline extractor.")
        except Exception as exc:  # the model's answer is untrusted input: whatever it breaks, the
            # text is still learned (offline) and the failure is on record with its traceback
            log.exception("learn: model extraction of %s failed unexpectedly", source_type(source))
            if activity is not None:
                activity.record("model", f"Model extraction failed for {source_type(source)} (unexpected "
                                         f"{type(exc).__name__}); used the offline extractor.")
    offline = text if offline_text is None else offline_text
    skipped: list[str] = []
    candidates = extract(offline, document_title=document_title, limit=limit + 1, now=written_at, force=force,
                         rejected=skipped, speaker=speaker)  # one more than kept: whether the text held more
    return Extraction(candidates[:limit], ProfileDelta(), OFFLINE_CONFIDENCE, skipped=skipped,
                      unread=len(candidates) > limit)


def _note_budget_once(store: Store, activity: Activity | None, being: str, provider: ModelProvider,
                      reason: str) -> None:
    day = provider.budget.day() if provider.budget is not None else ""
    if activity is None or state.get_text(store, "provider", being, "budget_noted") == day:
        return
    state.set_text(store, "provider", being, "budget_noted", day)
    activity.record("model", f"Offline extraction until midnight UTC: {reason}.")


def compare_with_model(store: Store, activity: Activity | None, being: str, candidates: list[Candidate],
                       source: str, provider: ModelProvider,
                       namespace: str = DEFAULT_NAMESPACE) -> list[dict[int, tuple[str, str]] | None] | None:
    """The model's judgement of how each candidate relates to its best keyword matches among `being`'s active
    memories in `namespace` (`twin.learn.capture_judge.judge`: one call, before the write transaction so no lock is held during it),
    or None when the model cannot answer: capture then uses its offline rules. Sensitive memories never go to
    the model: a candidate holding a secret gets None (the offline rules relate it), and sensitive existing
    memories are left out of the others' matches. A failure writes one `model` activity line naming the source
    type and the reason, never the text; a resting provider or an exhausted budget falls back silently
    (extraction already said so)."""
    shared = [not c.sensitive and not contains_secret(c.content) for c in candidates]
    batch = [(c.content, _not_sensitive(store, related_memories(store, being, c.content, COMPARED_PER_MEMORY,
                                                                namespace)))
             if ok else (c.content, []) for c, ok in zip(candidates, shared, strict=True)]
    try:
        judged = judge(provider, batch)
        return [j if ok else None for j, ok in zip(judged, shared, strict=True)]
    except (BudgetExhausted, ProviderResting):
        return None
    except ProviderError as exc:
        if activity is not None:
            activity.record("model", f"Model comparison failed for {source_type(source)} ({exc}); "
                                     "used the offline rules.")
        return None


def _not_sensitive(store: Store, matches: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """`matches` (`(id, content)`) without the sensitive memories."""
    fields = store.ranking_fields({mid for mid, _ in matches})
    return [(mid, text) for mid, text in matches if mid in fields and fields[mid].sensitivity != SENSITIVE]


def _store_candidates(store: Store, being: str, candidates: list[Candidate], source: str, ref: str | None,
                      result: LearnResult, now: str, confidence: float = OFFLINE_CONFIDENCE,
                      compare: bool = True, judgements: list[dict[int, tuple[str, str]] | None] | None = None,
                      force: bool = False, said_by: dict | None = None, namespace: str = DEFAULT_NAMESPACE) -> None:
    """Each candidate through `twin.learn.capture.capture` (dedup, gate, update, supersede) in `namespace`, tallied
    in `result`;
    `judgements` (one per candidate, from `compare_with_model`) replace the offline comparison rules.
    `said_by` (`{"speaker": …, "origin": …}`) joins the provenance: who wrote the text, and where from."""
    provenance = {"source_type": source_type(source), "captured_from": ref or source, "confidence": confidence,
                  **(said_by or {})}
    for n, cand in enumerate(candidates):
        outcome = capture(store, being, cand, source, now, provenance, compare=compare, force=force,
                          judged=judgements[n] if judgements is not None else None, namespace=namespace)
        if outcome.deduplicated:
            result.reinforced.append(outcome.id)
        elif outcome.updated:
            result.updated.append(outcome.id)
            result.update_reasons[outcome.id] = outcome.reason or "a restatement"
        elif outcome.rejected:
            result.reject(cand.content, outcome.rejected)
        else:
            result.created.append(outcome.id)
        result.superseded.extend(outcome.superseded)  # a reinforced memory said again may hide what replaced it
        result.supersessions.extend(outcome.supersessions)


def learn(store: Store, activity: Activity | None, being: str, text: str, source: str, ref: str | None = None,
          *, limit: int = MAX_PER_CALL, provider: ModelProvider | None = None, quiet: bool = False,
          ingest_id: int | None = None, force: bool = False, speaker: str | None = None,
          origin: str | None = None, namespace: str = DEFAULT_NAMESPACE) -> LearnResult:
    """Extract up to `limit` (seed 000: 12) memories from `text` and store them for `being` in `namespace`, with
    the profile delta merged in (seed 001's `learn()`).

    `namespace` (seed 003; `twin.namespaces.checked`, a bad name raises `NamespaceError` before anything is read):
    the memories go there, and are deduplicated, updated and superseded only against that namespace's memories.

    `speaker`: someone other than the owner wrote `text` (a chat message the owner forwarded, quoted or replied
    to); its memories say what that person says ("Trudy says that Owner owes Trudy 500 euros.") and keep
    `speaker` and `origin` (where it came from, e.g. "forwarded from Trudy Meyer (user 777)") in provenance.

    `source` follows DESIGN.md (`'muse'`, `'file:<path>'`, `'email:<threadId>'`, …); `ref` is where
    the text was captured from (kept in provenance). `provider` None = offline extraction; with one, the
    model extracts and the offline extractor is the fallback (`extract_for_learning`), and the model compares
    the new memories with the ones they may restate or contradict (`compare_with_model`; offline rules when it
    cannot). Writes one activity
    line ("Learned 3 thing(s) from email and updated the profile.") unless called `quiet`ly (callers that
    summarise many calls; model-fallback lines are still written) or `activity` is None, and, whenever it hid
    older memories, one more line naming their ids and rules, never their text (`capture.supersession_line`:
    "Superseded 1 older memory: #4 by #12 (same home city)."). `ingest_id`: the staged
    item (`twin.ingest`) the text came from, deleted in the transaction that stores its memories, so a retried job
    finds nothing to redo. Never raises on odd text or model trouble; raises `sqlite3.Error` only if the store
    itself fails (nothing is half-written). `force` (`twin learn --force`, seed 003's `force: true`) stores what
    the worthiness gate and the extractor's memorability floor would reject, still deduplicated and checked for
    secrets; relative dates are resolved on the moment of learning in the machine's zone. `result.skipped` says
    why sentences were left out (their numbers, never their text).
    """
    checked_stored(namespace)
    result = LearnResult()
    extraction = extract_for_learning(store, activity, being, strip_controls(text), source, provider, limit=limit,
                                      written_at=datetime.now().astimezone(), force=force, speaker=speaker or None)
    result.skipped, result.unread = extraction.skipped, extraction.unread
    if not (extraction.candidates or extraction.skipped or extraction.dropped):
        result.skipped = [unworthy(text.strip()) or NOTHING_FOUND]
    for content, reason in extraction.dropped:
        result.reject(content, f"the model's memory: {reason}")
    judgements = None
    if provider is not None and extraction.candidates:
        judgements = compare_with_model(store, activity, being, extraction.candidates, source, provider, namespace)
    now = utc_now()
    with store.atomic():
        said_by = {k: v for k, v in (("speaker", speaker), ("origin", origin)) if v} if speaker else None
        _store_candidates(store, being, extraction.candidates, source, ref, result, now, extraction.confidence,
                          judgements=judgements, force=force, said_by=said_by, namespace=namespace)
        result.profile_updated = merge_into_profile(store, being, extraction.profile, now)
        if ingest_id is not None:
            ingest.consume(store, [ingest_id])
    if activity is not None and not quiet and (result.created or result.reinforced or result.profile_updated):
        activity.record("learned", learned_line(len(result.created), len(result.reinforced), source_type(source),
                                                result.profile_updated))
    if activity is not None and result.supersessions:
        activity.record("learned", supersession_line(result.supersessions))
    return result


def learned_line(created: int, reinforced: int, kind: str, profile_updated: bool = False) -> str:
    """The diary line of learning (seed 001): "Learned 3 thing(s) from email, reinforced 1 and updated the
    profile."."""
    parts = [f"Learned {created} thing(s) from {kind}"]
    if reinforced:
        parts.append(f"reinforced {reinforced}")
    if profile_updated:
        parts.append("updated the profile")
    return (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + "."


def learn_document(store: Store, being: str, text: str, source: str, title: str | None, max_memories: int,
                   ref: str | None = None, provider: ModelProvider | None = None,
                   activity: Activity | None = None, offline_text: str | None = None,
                   ingest_id: int | None = None, namespace: str = DEFAULT_NAMESPACE,
                   replace: bool = True) -> LearnResult:
    """Replace the memories of one document (`source`, e.g. `'file:/home/me/notes.md'`) in `namespace` with those
    of `text` (the document's memories in other namespaces are left alone); with `replace` False (`text` is what
    was appended to a file that only grew) add them to the document's memories, removing none.

    Offline, the text is read in calls of at most 12 memories (seed 000) up to `max_memories` in all (a bound
    per file); with a `provider`, one model call reads the document (cut to the provider's input limit) for
    at most 12, and its profile delta is merged. Memories the new text still yields keep their ids (no
    re-embedding); the others of this source are removed (`twin.lifecycle.forgetting.remove_memories`: row, FTS, vector,
    edges; the scrub marker is set, so the caller requests a scrub; the index is scrubbed at its next checkpoint).
    `activity` receives only model-fallback lines (the connector writes the summary).
    `offline_text`: what the offline extractor reads instead of `text` (see `extract_for_learning`); both are
    cleaned of terminal controls first (`strip_controls`), as `learn()` cleans its text. `title`
    None reads the text as conversation (third-person sentences, kinds by content) rather than as a document.
    `ingest_id`: the staged item the text came from, deleted in the same transaction (see `learn`).
    """
    checked_stored(namespace)
    result = LearnResult()
    extraction = extract_for_learning(store, activity, being, strip_controls(text), source, provider,
                                      limit=max_memories, document_title=title,
                                      offline_text=None if offline_text is None else strip_controls(offline_text),
                                      written_at=_file_time(store, being, source))
    candidates = extraction.candidates
    result.unread = extraction.unread
    for content, reason in extraction.dropped:
        result.reject(content, f"the model's memory: {reason}")
    wanted = {content_sha256(c.content) for c in candidates}
    now = utc_now()
    with store.atomic():
        kept = set()
        replaced = []
        for mid, memory in store.get_many(store.ids_by_source(being, source, (namespace,))).items():
            if memory.content_sha256 in wanted:
                kept.add(memory.content_sha256)
            elif replace:
                replaced.append(mid)
        result.removed = remove_memories(store, replaced)
        fresh = [c for c in candidates if content_sha256(c.content) not in kept]
        for start in range(0, len(fresh), MAX_PER_CALL):
            _store_candidates(store, being, fresh[start:start + MAX_PER_CALL], source, ref, result, now,
                              extraction.confidence, compare=False, namespace=namespace)
        result.profile_updated = merge_into_profile(store, being, extraction.profile, now)
        if ingest_id is not None:
            ingest.consume(store, [ingest_id])
    if activity is not None and source.startswith("file:"):  # the source is a safe line already (`file_source`)
        if extraction.unread:
            activity.record("indexed_file", f"Files: {source[len('file:'):]} gave its first {max_memories} memories "
                            "(files_max_memories); the rest of it was not read.", subject=source)
        elif not candidates and replace:  # (a part a file gained that holds nothing, a blank line, is no news)
            activity.record("indexed_file", f"Files: {source[len('file:'):]} was read and gave no memory (no "
                            "sentence of it reads as one to keep: code, a table of numbers, one over-long line).",
                            subject=source)
    return result


def _file_time(store: Store, being: str, source: str) -> datetime:
    """When a file was written: its modification time in the files manifest (`'file:<path>'`), in the machine's
    zone; now when the source is no file or has no row."""
    if source.startswith("file:") and (entry := manifest.get(store, being, source[len("file:"):])) is not None \
            and entry.mtime_ns > 0:
        return datetime.fromtimestamp(entry.mtime_ns / 1e9).astimezone()
    return datetime.now().astimezone()


def forget_source(store: Store, being: str, source: str, namespace: str = DEFAULT_NAMESPACE) -> list[int]:
    """Delete every memory of `being` in `namespace` whose source is `source` (a file that is gone), through
    `twin.lifecycle.forgetting.remove_memories`; the scrub marker is set and the caller requests the (coalesced) scrub.
    Returns their ids."""
    with store.atomic():
        return remove_memories(store, store.ids_by_source(being, source, (namespace,)))


def forget(store: Store, activity: Activity | None, memory_ids: list[int],
           namespaces: Namespaces = None) -> list[int]:
    """Hard-forget memories by id (DESIGN.md invariant 5) with every copy of their text (`twin.lifecycle.forgetting.forget`:
    row, FTS entry, vector, edges, transcript rows and summaries; the database files scrubbed at once; the
    index writer scrubs the vector bytes before its next checkpoint). The activity line names ids, never text.
    `namespaces` (`twin.namespaces.scope`'s tuple) leaves ids of other namespaces alone; None (the default, an id
    names one memory) reaches every namespace. Returns the ids that existed (and were in `namespaces`)."""
    found = store.get_many(memory_ids)
    if namespaces is not None:
        found = {i: m for i, m in found.items() if m.namespace in namespaces}
    gone: set[int] = set()
    for being in sorted({m.being_id for m in found.values()}):
        done = forget_everywhere(store, activity, being, [i for i, m in found.items() if m.being_id == being],
                                 namespaces)
        gone.update(m.id for m in done.memories)
    return [i for i in found if i in gone]


def as_memories(store: Store, ids: list[int]) -> list[Memory]:
    """The memories for `ids` that still exist, in the order of `ids`."""
    found = store.get_many(ids)
    return [found[i] for i in ids if i in found]
