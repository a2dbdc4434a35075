"""Capture: how one new memory joins the store (seed 003's remember path; DESIGN.md invariant 2).

In order, inside the caller's transaction:

Everything happens inside one (being, namespace) (seed 003: "the same (user, project, namespace) scope"): the same
sentence in another namespace is another memory, and no memory of another namespace is updated or superseded.

1. exact duplicate (same normalised content, same being and namespace) → reinforce it, `deduplicated` (even with `force`);
2. the worthiness gate (`capture_rules.unworthy`: shorter than 12 characters, filler) → `rejected`, nothing
   stored, unless `force`;
3. the active memories it may restate or contradict: the best keyword matches of its words (FTS5), each
   related by the model when `learn()` had one compare them (`judged`, from `twin.learn.capture_judge`), else by
   the offline rules (LIBRARY_NOTES §8: similarity alone cannot tell a contradiction from a paraphrase);
   - the model's `same` or `refines`, or offline a restatement that refines the old one (every word of the
     old memory kept, `capture_rules.relate`) → the old memory is updated in place: same id, hits and edges,
     new content, re-embedded (its vector is dropped, so the embedding worker embeds it again) → `updated`;
   - contradictions → the new memory is inserted and each contradicted one is marked `superseded` with
     `superseded_by` and a reason a person reads (`Supersession`) → `superseded: [ids]` (hidden from recall,
     listing and chat, kept and readable by id and with `--all`). The model's `contradicts` ("the model:
     <its reason>"); offline: the same slot with another value (`capture_slots.slot_change`: "same home city,
     new value: Berlin replaces Lisbon"; a verb several attributes share, "moved", is no slot), `relate`'s
     negation flip or opposite preference, and the same statement of a state with only its numbers changed
     ("Owner has 2 cats." → "Owner has 3 cats."; never an event or a dated statement, `capture_slots.is_state`);
     a memory said again makes what replaced it stale in turn ("said again: …");
4. otherwise a plain insert. Every inserted memory gets its sensitivity inferred (`sensitivity`: secrets are
   `sensitive`) and an `edge_markers` row (its graph edges are written once it has a vector).
On every path the stricter sensitivity wins (`sensitivity.stricter`): a memory that supersedes, updates or is
revived over a `sensitive` one is `sensitive` too, so the newest PIN of a chain never shows in plain recall.

Response shapes follow seed 003: `{id, deduplicated}`, `{id, updated}`, `{id, superseded}`, `{id: None,
rejected}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from twin.memory import content_sha256
from twin.namespaces import DEFAULT_NAMESPACE
from twin.store import Store
from twin.text.capture_rules import PARSED_CACHE, drops_numbers, numbers_changed, relate, tokens, unworthy
from twin.text.capture_slots import NAMED_ATTRIBUTES, is_state, slot_change
from twin.text.extractor import Candidate
from twin.text.query_terms import fts_query, query_terms, selective_terms
from twin.text.sensitivity import SENSITIVE, infer_sensitivity, stricter

RELATED_CANDIDATES = 50
"""Active memories compared with a new one (the best keyword matches of its words). On the eval set 8 found 11
of its 25 supersessions, 20 found 13, 50 and 100 found 17 (3 more that the set does not list, 2 of them
right); `relate` and the supersession rules cost ~0.05 ms of CPU a pair once each sentence is read only once
(`capture_rules.PARSED_CACHE`; ~0.5 ms without), so 50 add ~2.5 ms per memory a conversation teaches (documents are
not compared)."""
RELATED_COMMON_SHARE = 0.5
"""A word in more than this share of the memories (and in more than `RELATED_COMMON_MIN_DOCS`) is left out of the
search for related memories (`query_terms.selective_terms`): "Owner" begins nine in ten of them, and with it every
capture made FTS5 score the whole store (8.5 ms a capture at 3,000 memories, 1.9 ms without it; time linear in the
store). Only near-universal words: the verbs and nouns a supersession needs ("lives", "works") stay, unlike
recall's 1 % (`twin.recall.keyword_search.COMMON_TERM_SHARE`)."""
RELATED_COMMON_MIN_DOCS = 200
"""… unless it is in at most this many memories (a small store keeps every word)."""
STATE_KINDS = frozenset({"fact", "preference", "relationship"})
"""Kinds that state how things are (a count, an age, a weight can change); episodes and documents record what
happened or was written, so two with different numbers are two events, not an update."""
SLOT_RULE = "same subject '"
"""The start of `relate()`'s rule-1 reason (same single-valued relation, another value): capture leaves that rule
to `capture_slots.slot_change`, which names the attribute by its words, not by a verb that several attributes
share ("moved" a home, bank accounts or an appointment)."""
CHANGE_MARKER = "change marker"
"""`relate`'s reasons that rest only on a change word ("now", "started", "left") on a shared topic do not
supersede here: on the eval set, among 8 keyword candidates of each of 501 memories, they were right 3 times and
wrong 27 times ("water heater in the Alfama flat broke" would have hidden "Owner lives in … Alfama"), while
"same subject, different object" was right 9 times and wrong once (bench/eval_recall.py). Hiding a true
memory is worse than keeping a stale one beside the new."""



@dataclass(frozen=True)
class Supersession:
    """One memory hidden by another: `id` is superseded by `by`. `reason` is in words a person reads ("same home
    city, new value: Berlin replaces Lisbon"), stored in `supersede_reason` beside the memory and shown by `twin
    memories --all`; it may quote the values. `rule` names the rule alone ("same home city", "a new number",
    "the model's judgement", "said again") for diary lines, which never quote memory text."""

    id: int
    by: int
    reason: str
    rule: str

    def to_dict(self) -> dict:
        """`{id, by, reason}` (`twin learn --json`)."""
        return {"id": self.id, "by": self.by, "reason": self.reason}


def supersession_line(supersessions: list[Supersession]) -> str:
    """The diary line of one learn's supersessions, ids and rules only: "Superseded 2 older memories: #3 by #9
    (same home city), #4 by #9 (a new number)."""
    parts = ", ".join(f"#{s.id} by #{s.by} ({s.rule})" for s in supersessions)
    return f"Superseded {len(supersessions)} older memor{'y' if len(supersessions) == 1 else 'ies'}: {parts}."


@dataclass
class CaptureResult:
    """Seed 003's remember response: the memory's id (None when rejected), and which path it took; `reason`
    says why it was updated or what it superseded, `supersessions` one `Supersession` per memory it hid."""

    id: int | None
    deduplicated: bool = False
    updated: bool = False
    superseded: list[int] = field(default_factory=list)
    rejected: str | None = None
    reason: str | None = None
    supersessions: list[Supersession] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON shape: `id` plus only the flags that apply."""
        out: dict = {"id": self.id}
        if self.deduplicated:
            out["deduplicated"] = True
        if self.updated:
            out["updated"] = True
        if self.superseded:
            out["superseded"] = self.superseded
        if self.rejected:
            out["rejected"] = self.rejected
        if self.reason:
            out["reason"] = self.reason
        return out


def capture(store: Store, being: str, candidate: Candidate, source: str, now: str, provenance: dict,
            *, force: bool = False, compare: bool = True,
            judged: dict[int, tuple[str, str]] | None = None, namespace: str = DEFAULT_NAMESPACE) -> CaptureResult:
    """Store one candidate memory of `being` in `namespace` (a name `twin.namespaces.checked` passed) through the
    capture rules above; call inside `store.atomic()`.
    `now` (UTC ISO-8601) is its creation time. `compare` False skips step 3 (a document's memories replace
    that document's own and are not compared with others). `judged` is the model's `{existing id: (relation,
    reason)}` for this candidate (`twin.learn.capture_judge.judge`); given, it replaces the offline rules (ids no
    longer active, or of another being or namespace, are skipped). Never raises for odd content; `sqlite3.Error` from the
    store."""
    content = candidate.content
    existing = store.find_by_sha(being, content_sha256(content), namespace)
    if existing is not None:
        store.reinforce(existing.id, now)
        if candidate.sensitive and existing.sensitivity != SENSITIVE:  # learned before its secret was recognised
            store.set_sensitivity(existing.id, SENSITIVE)
        if existing.status == "superseded":  # said again: current again, and what replaced it is not
            hidden = _revive(store, existing.id, existing.superseded_by)
            return CaptureResult(existing.id, deduplicated=True, superseded=[s.id for s in hidden],
                                 supersessions=hidden)
        return CaptureResult(existing.id, deduplicated=True)
    if not force and (why := unworthy(content)):
        return CaptureResult(None, rejected=why)
    if compare and judged is not None:
        return _capture_judged(store, being, candidate, source, now, provenance, judged, namespace)
    superseded: list[tuple[int, str, str]] = []
    for old_id, old_content in related_memories(store, being, content, namespace=namespace) if compare else ():
        relation = relate(content, old_content)
        if relation.kind == "duplicate" and _refines(content, old_content) and _same_opening(content, old_content):
            _update_in_place(store, old_id, candidate, now, provenance)
            return CaptureResult(old_id, updated=True, reason=relation.reason)
        why = supersede_reason(content, old_content, relation.kind, relation.reason)
        if why is None and candidate.kind in STATE_KINDS and (change := number_change(content, old_content)) \
                and store.get(old_id).kind in STATE_KINDS:  # the row is read only for a number that changed
            why = change
        if why is not None:
            superseded.append((old_id, *why))
    return _insert(store, being, candidate, source, now, provenance, superseded, namespace)


def supersede_reason(new: str, old: str, kind: str, reason: str) -> tuple[str, str] | None:
    """`(reason, rule)` when `new` replaces `old` by the offline rules, else None: the same slot with a new value
    (`capture_slots.slot_change`: "same home city, new value: Berlin replaces Lisbon"), or `relate()`'s
    negation flip or opposite preference between plain statements about the same subject (`same_subject`),
    never on a change word alone (`CHANGE_MARKER`) nor for a judgement that drops the old number. `kind` and
    `reason` are `relate(new, old)`'s. Read-only."""
    if why := slot_change(new, old):  # "same <attribute>, …": the diary names only attributes of the table
        attribute = why[len("same "):why.find(",")]
        return why, f"same {attribute}" if attribute in NAMED_ATTRIBUTES else "same attribute"
    if (kind != "contradiction" or reason.startswith((SLOT_RULE, CHANGE_MARKER)) or not same_subject(new, old)
            or drops_numbers(new, old)):
        return None
    if reason.startswith("negation flip"):
        return ("the same statement, now negated" if _NEGATED.search(new) else "the same statement, no longer "
                "negated"), "a negation"
    return f"the {reason}" if reason.startswith("opposite") else reason, "the opposite preference"


_NEGATED = re.compile(r"(?i)\b(?:not|no longer|never|no more|any ?more|stopped|quit|gave up)\b|n['’]t\b")


def number_change(new: str, old: str) -> tuple[str, str] | None:
    """`(reason, rule)` when `new` is `old` with another number and both state how things are, else None:
    the same subject (`same_subject`), the same words apart from the numbers (`numbers_changed`), and neither an
    event nor dated (`capture_slots.is_state`: "Owner ran 5 km." / "Owner ran 8 km." are two runs, "Owner has
    a meeting at 10:00 on Monday." a plan of its own day). Read-only."""
    changed = numbers_changed(new, old)  # first: most pairs hold no number, and this is the cheap test
    if changed is None or not same_subject(new, old) or not is_state(new) or not is_state(old):
        return None
    return f"same statement, new number: {changed}", "a new number"


def _capture_judged(store: Store, being: str, candidate: Candidate, source: str, now: str, provenance: dict,
                    judged: dict[int, tuple[str, str]], namespace: str) -> CaptureResult:
    """Step 3 on the model's judgements: the first `same`/`refines` updates in place, else every `contradicts`
    is superseded by the new memory (only memories of `being` in `namespace` count)."""
    fields = store.ranking_fields(judged)
    live = {mid: verdict for mid, verdict in judged.items()
            if mid in fields and fields[mid].being_id == being and fields[mid].namespace == namespace
            and fields[mid].status == "active"}
    for old_id, (relation, reason) in live.items():
        if relation in ("same", "refines"):
            _update_in_place(store, old_id, candidate, now, provenance)
            return CaptureResult(old_id, updated=True, reason=f"the model: {reason}")
    superseded = [(mid, f"the model: {reason}", "the model's judgement")
                  for mid, (relation, reason) in live.items() if relation == "contradicts"]
    return _insert(store, being, candidate, source, now, provenance, superseded, namespace)


def _insert(store: Store, being: str, candidate: Candidate, source: str, now: str, provenance: dict,
            superseded: list[tuple[int, str, str]], namespace: str) -> CaptureResult:
    """Step 4: insert the new memory in `namespace` (sensitivity inferred, an edge marker), and mark `superseded`
    `(id, reason, rule)` as replaced by it, with the reason."""
    content = candidate.content
    level = stricter(candidate_sensitivity(candidate), *store.sensitivities([old_id for old_id, _, _ in superseded]))
    if level == SENSITIVE:  # the reason would quote both values ("new value: 2222 replaces 1111"): say the rule only
        superseded = [(old_id, masked_reason(rule), rule) for old_id, _, rule in superseded]
    new_id = store.insert_memory(being, candidate.kind, content, source, candidate.importance, candidate.tags,
                                 created_at=now, sensitivity=level, provenance=provenance, namespace=namespace)
    hidden = [Supersession(old_id, new_id, reason[:300], rule) for old_id, reason, rule in superseded]
    for s in hidden:
        store.supersede(s.id, new_id, s.reason)
    store.add_edge_markers([new_id], now)
    return CaptureResult(new_id, superseded=[s.id for s in hidden], reason="; ".join(s.reason for s in hidden) or None,
                         supersessions=hidden)


def masked_reason(rule: str) -> str:
    """The reason a supersession between sensitive memories is said and stored with: its rule without the values
    ("same pin: a new value, not shown (sensitive)"), since the reason is shown wherever the new memory's id is
    (`twin learn`, the API's capture answer, recall's "replaces" reason) without the caller asking for sensitive
    memories. Pure."""
    return f"{rule}: a new value, not shown (sensitive)"


def candidate_sensitivity(candidate: Candidate) -> str:
    """``sensitive`` when the extractor found a secret value in the candidate (`Candidate.sensitive`, from the
    whole text) or its content shows one (`infer_sensitivity`, seed 003), else ``private``."""
    return SENSITIVE if candidate.sensitive else infer_sensitivity(candidate.content)


def _revive(store: Store, memory_id: int, superseded_by: int | None) -> list[Supersession]:
    """Make a superseded memory current again (it was said again); the current end of the chain that replaced
    it (following `superseded_by` to the active memory: Lisbon → Berlin → Warsaw gives Warsaw) is superseded by
    it in turn, with the reason "said again: #<id> is current again". Returns what was newly superseded."""
    store.revive(memory_id)
    head, seen = superseded_by, {memory_id}
    while head is not None and head not in seen:
        seen.add(head)
        link = store.successor(head)
        if link is None:
            return []
        if link.status == "active":
            reason = f"said again: #{memory_id}, which this memory had replaced, is current again"
            store.supersede(head, memory_id, reason)
            store.set_sensitivity(memory_id, stricter(*store.sensitivities([memory_id, head])))  # the stricter wins
            return [Supersession(head, memory_id, reason, "said again")]
        head = link.superseded_by
    return []


def _same_opening(new: str, old: str) -> bool:
    """The same subject and the same first verb ("Owner lives …" / "Owner lives …", not "Owner's parents live …"
    or "Owner cancelled …" for "Owner has …"): an update in place must not turn one fact into another."""
    a, b = _subject_words(new), _subject_words(old)
    if a is None or a != b:
        return False
    rest_a, rest_b = new.casefold().split()[len(a):], old.casefold().split()[len(b):]
    return rest_a[:1] == rest_b[:1]


def related_memories(store: Store, being: str, content: str, limit: int = RELATED_CANDIDATES,
                     namespace: str = DEFAULT_NAMESPACE) -> list[tuple[int, str]]:
    """`(id, content)` of up to `limit` active memories of `being` in `namespace` that best match `content`'s words
    (FTS5 bm25; near-universal words left out: `RELATED_COMMON_SHARE`), best first; the exact same content is left
    out (capture reinforces it instead). Read-only."""
    terms = query_terms(content)
    if not terms:
        return []
    documents, counts = store.term_document_counts(terms)
    match = fts_query(selective_terms(terms, counts, documents, RELATED_COMMON_SHARE, RELATED_COMMON_MIN_DOCS))
    if match is None:
        return []
    return [(mid, text) for mid, _, text in store.fts_search(being, match, limit, namespaces=(namespace,))
            if text != content]


_HEDGED = re.compile(r"\b(?:never|not|\w+n[’']t|would|could|might|may|used to|was|were|lived|worked|wanted|wants|"
                     r"if|maybe|perhaps|plans?|hopes?|wishes?)\b", re.IGNORECASE)
"""Words that make a statement not a plain present fact: negation, modals, past tense, plans, conditions."""


def same_subject(new: str, old: str) -> bool:
    """A guard on top of `relate` before a supersession (ours): both sentences say something plainly (no
    `_HEDGED` word) about the same subject, read from the surface: "Owner <verb> …" for both, or "Owner's
    <the same words> <verb> …" (compared case-insensitively up to the first word both share after them). A
    breaker run caught `relate` alone reading "Owner's parents live in Faro.", "Owner lived in Paris in 2010."
    or "Owner would never live in Berlin." as replacing "Owner lives in Lisbon."."""
    if _hedged(new) or _hedged(old):
        return False
    a, b = _subject_words(new), _subject_words(old)
    return a is not None and a == b


@lru_cache(maxsize=PARSED_CACHE)
def _hedged(sentence: str) -> bool:
    """Whether `sentence` holds a `_HEDGED` word (kept per sentence: the same older memories are compared capture
    after capture, `capture_rules.PARSED_CACHE`)."""
    return _HEDGED.search(sentence) is not None


@lru_cache(maxsize=PARSED_CACHE)
def _subject_words(sentence: str) -> tuple[str, ...] | None:
    """`("owner",)` for "Owner lives …", `("owner's", "sister", "ana")` for "Owner's sister Ana lives …" (the
    words before the first verb-like word: one ending in "s"/"es" after the noun phrase, or is/are/has/have),
    None when the sentence is not about the owner."""
    words = sentence.casefold().rstrip(".!").split()
    if not words or words[0] not in ("owner", "owner's", "owner’s"):
        return None
    if words[0] == "owner":
        return ("owner",)
    for n, word in enumerate(words[1:], start=1):
        if word in ("is", "are", "has", "have") or (n >= 2 and word.endswith("s") and not word.endswith(("'s", "’s"))):
            return tuple(words[:n])
    return tuple(words)


def _refines(new: str, old: str) -> bool:
    """True when `new` keeps every word of `old` (a refinement: "Owner lives in Berlin." → "Owner lives in
    Berlin with Lena.", or the same words reordered). A looser restatement is inserted beside the old memory:
    one changed word can be another person, place or count ("sister Ana" / "sister Mira"), and an update in
    place would overwrite it (ours)."""
    old_words = tokens(old)
    return bool(old_words) and old_words <= tokens(new)


def _update_in_place(store: Store, memory_id: int, candidate: Candidate, now: str, provenance: dict) -> None:
    """Seed 003's update: same id, hits and edges; new content (and provenance), the stricter sensitivity of the
    old memory and the new content, the higher importance, hits + 1; the vector is dropped so the embedding worker
    embeds the new content."""
    level = stricter(candidate_sensitivity(candidate), *store.sensitivities([memory_id]))
    store.update_in_place(memory_id, candidate.content, level, provenance, candidate.importance, now)
