"""Commands that teach and read memories: learn, recall, memories/recent/today, neighbors, stats."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys

from twin.cli.output import emit, show
from twin.cli.output import print_json as _print_json
from twin.cli.queues import reachable_bus as _bus
from twin.limits import LIMIT_MAX
from twin.memory import SENSITIVE
from twin.settings import Settings

LEARN_OVER_API_BYTES = (1 << 20) - (1 << 12)
"""Largest text (as a JSON string, the bytes it takes in the request) `twin learn` sends to the daemon: the API's
body bound (`twin.api.guard`, 1 MiB) less room for the other fields; a longer one is learned in this process."""


def cmd_learn(settings: Settings, args: argparse.Namespace) -> int:
    """Learn TEXT now (the same `learn()` every source uses): through the running daemon's API when it answers
    (no model loaded here), else in this process, which asks the daemon to embed it (`twin.remote.open_twin`);
    the same output either way. `--json` prints `{created, reinforced, updated, superseded, rejected}`: memories
    created, reinforced and updated (each updated one with its `reason`), `superseded: [{id, by, reason}]` for
    each memory this text hid, and `rejected: [{content, reason}]` for each candidate not stored."""
    from twin.remote import LocalTwin, open_twin

    # stdin as bytes, decoded leniently: text that is not UTF-8 is still learned (with U+FFFD where it broke)
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace") if args.text == "-" else args.text
    if not text.strip():
        show("twin: learn needs some text (nothing was given)", file=sys.stderr)
        return 2
    big = len(json.dumps(text)) > LEARN_OVER_API_BYTES
    bus = lambda: _bus(settings)  # noqa: E731 - in this process, the daemon is told to embed
    with (LocalTwin(settings, bus) if big else open_twin(settings, bus)) as twin:
        # --source is outside text that becomes an identifier and diary text: one safe line (learn cleans it)
        done = twin.learn(text=text, source=args.source, force=args.force or None, namespace=args.namespace)
        created, reinforced, updated = (_as_shown(twin, done[part], args) for part in
                                        ("created", "reinforced", "updated"))
    rejected = [r["reason"] for r in done["rejected"] if r["content"] is not None]
    skipped = [r["reason"] for r in done["rejected"] if r["content"] is None]
    if args.json:
        _print_json({"created": created, "reinforced": reinforced,
                     "updated": [{**d, "reason": done["update_reasons"].get(str(d["id"]))} for d in updated],
                     "superseded": done["superseded"], "rejected": done["rejected"], "project": done.get("project"),
                     "note": done.get("note")})
        return 0
    if done.get("project") and (created or reinforced or updated):
        show(f"into project {done['project']} (its members read it; twin project deactivate keeps it your own)")
    for m in created:
        show(f"learned   #{m['id']} {m['kind']}{_echo(m, args.sensitive)}")
    for m in reinforced:
        show(f"reinforced #{m['id']} {m['kind']}{_echo(m, args.sensitive)} (importance {m['importance']:.2f})")
    for m in updated:
        show(f"updated   #{m['id']} {m['kind']}{_echo(m, args.sensitive)} "
             f"({done['update_reasons'].get(str(m['id']))})")
    for s in done["superseded"]:
        show(f"superseded #{s['id']} by #{s['by']}: {s['reason']} (kept: twin memories --all)")
    for reason in rejected + skipped:
        show(f"not stored: {reason}")
    if not (created or reinforced or updated or rejected or skipped):
        show("nothing memorable found in that text")
    if done.get("note"):
        show(f"note: {done['note']}", file=sys.stderr)
    return 0


def _as_shown(twin, memories: list[dict], args: argparse.Namespace) -> list[dict]:
    """`learn`'s memories (dicts, a sensitive one's text hidden) as `twin learn` shows them: a sensitive one read
    again with its text (`get_memory`, in its namespace) and shown by `Memory.shown` with its secret values
    masked (`sensitivity.redact`) unless `--sensitive`, so a terminal never echoes a key block."""
    from twin.memory import Memory
    from twin.text.sensitivity import redact

    out = []
    for m in memories:
        if m["sensitivity"] == SENSITIVE:
            ns = m["namespace"]  # a project's (its stored name) is read through the active project that took it
            whole = twin.get_memory(memory_id=m["id"], max_sensitivity="sensitive",
                                    **({} if ":" in ns else {"namespace": ns}))
            m = Memory(**whole).shown(args.sensitive, redact).to_dict()
        out.append(m)
    return out


def _echo(memory: dict, show_secrets: bool) -> str:
    """": <content>" for `twin learn`'s lines (a memory's dict as `_as_shown` gives it: a sensitive one's secret
    values already masked unless `show_secrets`, `--sensitive`), with where to see them."""
    if memory["sensitivity"] != SENSITIVE:
        return f": {memory['content']}"
    if show_secrets:
        return f" (sensitive): {memory['content']}"
    return f" (sensitive: the value is stored, `twin memories --sensitive` shows it): {memory['content']}"


def _mark(memory: dict) -> str:
    """"  [sensitive]" after a sensitive memory (a memory's dict) in recall and memories lists, else ""."""
    return "  [sensitive]" if memory["sensitivity"] == SENSITIVE else ""


def cmd_recall(settings: Settings, args: argparse.Namespace) -> int:
    """Answer QUERY with the best-matching memories (hybrid recall): through the running daemon's API when it
    answers (no model loaded here), else in this process (`twin.remote.open_twin`); the same answer either way.
    `--as-of` and `--min-relevance` (replaying a moment, the eval's cut) always run here."""
    if args.as_of is not None or args.min_relevance is not None:
        return _recall_here(settings, args)
    from twin.remote import open_twin

    with open_twin(settings) as twin:
        found = twin.search(query=args.query, limit=min(args.limit, 2**31), kind=args.kind, since=args.since,
                            max_sensitivity="sensitive" if args.sensitive else None, namespace=args.namespace,
                            include_namespaces=args.include_namespaces)
    _say_waiting(found["pending_vectors"])  # counted by the search itself, here or in the daemon
    return _print_hits(args, found["results"], keyword_only=found["degraded"])


def _say_waiting(waiting: int) -> None:
    """On stderr, that `waiting` memories have no vector of the current model yet (recall finds them by their
    words); nothing when none."""
    if waiting:
        show(f"({waiting} memories have no vector yet and are found by their words only: the daemon embeds "
             "them, or run twin backfill)", file=sys.stderr)


def _print_hits(args: argparse.Namespace, hits: list[dict], keyword_only: bool) -> int:
    """Recall's results (`twin.operations.shapes.Hit` dicts) as JSON (their `reasons` included) or one line each,
    with `--why` each reason recall gave for its place on a line below it; exit code 0."""
    if args.json:
        _print_json(hits)
        return 0
    if keyword_only:
        show("(keyword-only recall: no embedder)", file=sys.stderr)
    for h in hits:
        show(f"#{h['id']:<6} {h['score']:.3f}  {h['kind']:<12} {h['content']}  [{h['source']}]{_mark(h)}")
        for reason in h.get("reasons", []) if getattr(args, "why", False) else []:
            show(f"        why: {reason['words']}")
    if not hits:
        show("nothing found")
    return 0


def _recall_here(settings: Settings, args: argparse.Namespace) -> int:
    """`twin recall --as-of/--min-relevance`: recall in this process with those options."""
    from twin.store import Store
    from twin.wiring import open_recall

    with Store(settings.db_path) as store:
        recall = open_recall(settings, store)
        try:
            results = recall.recall(settings.being, args.query, limit=args.limit, kind=args.kind, since=args.since,
                                    as_of=args.as_of, touch=args.as_of is None, include_sensitive=args.sensitive,
                                    namespace=args.namespace, include_namespaces=args.include_namespaces,
                                    **({} if args.min_relevance is None else {"min_relevance": args.min_relevance}))
        finally:
            recall.close()
        if not recall.keyword_only:
            _say_waiting(store.count_pending_embeddings(recall.embedder.model_id))
    return _print_hits(args, [r.to_dict() for r in results], keyword_only=recall.keyword_only)


def cmd_memories(settings: Settings, args: argparse.Namespace) -> int:
    """List memories newest first (everything is readable: seed 000 "read all of it"; superseded ones with
    --all, sensitive ones with --sensitive). `twin recent` / `twin today` list those made since a time (since
    local midnight in the owner's zone for today: `twin.operations.reads.today_since`); listing never
    re-promotes a cold memory (seed 003). Through the running daemon's API when it answers, else here; `--all`
    always here (the API lists active memories)."""
    from twin.remote import open_twin

    shown = {"limit": min(args.limit, 2**31), "kind": args.kind,
             "max_sensitivity": "sensitive" if args.sensitive else None, "namespace": args.namespace,
             "include_namespaces": args.include_namespaces}
    with open_twin(settings) as twin:
        if args.command == "today":
            rows = twin.today(**shown)
        elif args.command == "recent":
            rows = twin.recent(since=args.since, **shown)
        else:
            rows = twin.list_memories(include_superseded=args.all or None, **shown)

    def plain() -> None:
        for m in rows:
            why = f": {m['supersede_reason']}" if m["supersede_reason"] else ""
            stale = f"  (superseded by #{m['superseded_by']}{why})" if m["status"] == "superseded" else ""
            show(f"#{m['id']:<6} {m['created_at']}  {m['kind']:<12} {m['content']}  [{m['source']}]{stale}"
                 f"{_mark(m)}")
        if len(rows) == args.limit:
            more = "--limit for more (up to 200), " if args.limit < LIMIT_MAX else ""
            show(f"(the newest {args.limit}; {more}twin export for every one)", file=sys.stderr)

    return emit(args, rows, plain)


def cmd_neighbors(settings: Settings, args: argparse.Namespace) -> int:
    """Memories linked to memory ID through the graph (seed 003), up to --depth edges away, scored by the product
    of edge strengths along the best path; superseded and sensitive ones hidden (--sensitive shows the latter).
    When the graph cannot be read the answer is empty and says "degraded" on stderr (seed 003)."""
    from twin.lifecycle.cycle import neighbors
    from twin.store import Store

    with Store(settings.db_path) as store:
        if store.get(args.id) is None:
            show(f"no memory #{args.id}", file=sys.stderr)
            return 1
        try:
            found = neighbors(store, args.id, depth=args.depth, include_sensitive=args.sensitive)
        except sqlite3.Error as exc:  # seed 003: a failed relations query is "degraded", the set empty
            show(f"degraded: the graph could not be read ({exc}); no neighbours shown", file=sys.stderr)
            found = []

    def plain() -> None:
        for m, score in found:
            show(f"#{m.id:<6} {score:.3f}  {m.kind:<12} {m.content}  [{m.source}]")
        if not found:
            show("no neighbours")

    return emit(args, [{**m.to_dict(), "score": round(score, 4)} for m, score in found], plain)


def cmd_stats(settings: Settings, args: argparse.Namespace) -> int:
    """Memory counts by kind and tier (warm/cold), superseded ones, graph edges, last decay and dream (seed 003)."""
    from twin.lifecycle.cycle import stats
    from twin.store import Store

    with Store(settings.db_path) as store:
        report = stats(store, settings.being)

    def plain() -> None:
        for kind, tiers in report["by_kind"].items():
            show(f"{kind:<13} {tiers['warm']:>7} warm {tiers['cold']:>7} cold")
        show(f"{'total':<13} {report['total_warm']:>7} warm {report['total_cold']:>7} cold; "
             f"{report['superseded']} superseded")
        show(f"edges: {report['edges']['co_occurs']} co_occurs, {report['edges']['co_inferred']} co_inferred")
        if set(report["by_namespace"]) - {"default"}:  # a store with one namespace prints as it always did
            show("namespaces: " + ", ".join(f"{ns} {t['warm']} warm {t['cold']} cold"
                                            for ns, t in report["by_namespace"].items()))
        show(f"last decay: {report['last_decay'] or 'never'}; last dream: {report['last_dream'] or 'never'}")

    return emit(args, report, plain)
