"""Export and import of memories as JSON lines, losslessly, for backups and migrations.

One line per memory with every field of `Memory` (ids, times as UTC ISO-8601, tags, provenance,
sensitivity, status, tier, what superseded it and why) and its outgoing graph edges (`edges: [[to id, kind,
strength], ...]`). Import goes through the dedup path: a memory whose normalised content is already known is
left as it is (not duplicated, and not reinforced either: restoring a backup twice must not inflate
importance); new memories are embedded by the usual batched flush and get their nearest-neighbour edges like
any new memory. A file's sensitivity is never trusted downwards: content holding a secret is `sensitive`
whatever the line says (`twin.sensitivity`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TextIO

from twin.activity import Activity
from twin.memory import KINDS, SENSITIVITIES, STATUSES, content_sha256, format_time, parse_time, utc_now
from twin.outside_text import json_text
from twin.sensitivity import infer_sensitivity
from twin.store import Store

MAX_CONTENT_CHARS = 20_000
"""An imported memory's content may be at most this long (a memory is a sentence; a longer line is not one)."""
MAX_HITS = 2**62
"""An imported hit count must lie in 0..MAX_HITS (SQLite integers are 64-bit)."""
FUTURE_SLACK = timedelta(days=1)
"""An imported `created_at` may be at most this far ahead of now (clock skew); later is a bad line."""


def export_memories(store: Store, being: str, out: TextIO) -> int:
    """Write every memory of `being` (all statuses), oldest first, one JSON object per line (`json_text`: UTF-8,
    terminal controls and lone surrogates as `\\uXXXX` escapes, so the file is safe on a terminal and always
    encodable). Returns the count."""
    edges: dict[int, list[list]] = {}
    for src, dst, kind, strength in store.conn.execute(
            "SELECT e.src, e.dst, e.kind, e.strength FROM memory_edges e JOIN memories m ON m.id = e.src"
            " WHERE m.being_id = ? ORDER BY e.src, e.dst, e.kind", (being,)):
        edges.setdefault(src, []).append([dst, kind, strength])
    n = 0
    for memory in reversed(store.list_memories(being, limit=10**12, include_superseded=True)):
        out.write(json_text({**memory.to_dict(), "edges": edges.get(memory.id, [])}) + "\n")
        n += 1
    return n


def _validated(row: dict) -> dict:
    """Check and normalise one imported object; raises `ValueError` naming the bad field."""
    content = row.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("content must be a non-empty string")
    if len(content) > MAX_CONTENT_CHARS:
        raise ValueError(f"content is longer than {MAX_CONTENT_CHARS} characters")
    hits = row.get("hits") or 0
    if not isinstance(hits, int) or isinstance(hits, bool) or not 0 <= hits <= MAX_HITS:
        raise ValueError(f"hits must be a whole number 0..{MAX_HITS}")
    kind = row.get("kind", "fact")
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {KINDS}")
    importance = float(row.get("importance", 0.4))
    if not 0 <= importance <= 1:
        raise ValueError(f"importance {importance} is outside 0..1")
    sensitivity = row.get("sensitivity") or ("sensitive" if row.get("sensitive") is True else "private")
    if sensitivity not in SENSITIVITIES:
        raise ValueError(f"sensitivity {sensitivity!r} is not one of {SENSITIVITIES}")
    if infer_sensitivity(content) == "sensitive":
        sensitivity = "sensitive"
    status = row.get("status", "active")
    if status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {STATUSES}")
    tags = row.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError("tags must be a list of strings")
    created = format_time(parse_time(row["created_at"])) if row.get("created_at") else utc_now()
    if parse_time(created) > datetime.now(UTC) + FUTURE_SLACK:
        raise ValueError(f"created_at {created} is in the future")
    accessed = format_time(parse_time(row["last_accessed"])) if row.get("last_accessed") else None
    provenance = row.get("provenance") if isinstance(row.get("provenance"), dict) else {}
    tier = row.get("tier") or "warm"
    if tier not in ("warm", "cold"):
        raise ValueError(f"tier {tier!r} is not warm or cold")
    return {"kind": kind, "content": content.strip(), "source": str(row.get("source") or "import"),
            "importance": importance, "tags": tags, "created_at": created, "last_accessed": accessed,
            "hits": hits, "sensitivity": sensitivity, "provenance": provenance,
            "status": status, "tier": tier,
            "updated_at": format_time(parse_time(row["updated_at"])) if row.get("updated_at") else None}


def import_memories(store: Store, activity: Activity | None, being: str, lines: Iterable[str | bytes]) -> dict:
    """Import JSON-lines memories into `being`. Returns `{created, known, skipped, problems, ids}` where
    `ids` maps each line number to the memory id it became (new, or the one already known).

    A bad line (not UTF-8, not JSON, a missing, out-of-range or future field) is skipped and listed in
    `problems`; the rest is imported. `superseded_by` (and its reason) is kept only when it refers to another
    memory imported in the same run; a superseded memory whose successor is not there is imported as active
    (else it would stay hidden for ever) and listed in `problems`. Edges are restored when both ends were
    imported in the run; every new memory is also marked for its nearest-neighbour edges.
    """
    report = {"created": 0, "known": 0, "skipped": 0, "problems": [], "ids": {}}
    old_to_new: dict[int, int] = {}
    superseded: list[tuple[int, object, object, int]] = []
    edges: list[tuple[int, object]] = []
    with store.transaction():
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line.decode("utf-8") if isinstance(line, bytes) else line)
                if not isinstance(raw, dict):
                    raise ValueError("not a JSON object")
                row = _validated(raw)
            except (ValueError, KeyError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
                report["skipped"] += 1
                report["problems"].append(f"line {number}: {exc}")
                continue
            existing = store.find_by_sha(being, content_sha256(row["content"]))
            if existing is not None:
                report["known"] += 1
                mid = existing.id
            else:
                mid = store.insert_memory(being, **row)
                store.add_edge_markers([mid], row["created_at"])
                report["created"] += 1
                if row["status"] == "superseded":
                    superseded.append((mid, raw.get("superseded_by"), raw.get("supersede_reason"), number))
                if isinstance(raw.get("edges"), list):
                    edges.append((mid, raw["edges"]))
            report["ids"][number] = mid
            if isinstance(raw.get("id"), int):
                old_to_new[raw["id"]] = mid
        for mid, old_target, reason, number in superseded:
            target = old_to_new.get(old_target) if isinstance(old_target, int) else None
            if target is None or target == mid:
                store.conn.execute("UPDATE memories SET status = 'active' WHERE id = ?", (mid,))
                report["problems"].append(f"line {number}: superseded by {old_target!r}, which is not in the "
                                          "import; imported as active")
                continue
            store.conn.execute("UPDATE memories SET superseded_by = ?, supersede_reason = ? WHERE id = ?",
                               (target, str(reason)[:300] if reason else None, mid))
        _restore_edges(store, edges, old_to_new)
    if activity is not None:
        activity.record("learned", f"Imported {report['created']} memories ({report['known']} already known, "
                                   f"{report['skipped']} bad lines skipped).")
    return report


def _restore_edges(store: Store, edges: list[tuple[int, object]], old_to_new: dict[int, int]) -> None:
    """Insert the exported edges `(new src id, [[old dst id, kind, strength], ...])` whose other end was imported
    too; malformed items are ignored (they only lose an edge the embedding worker will find again)."""
    rows = []
    for src, items in edges:
        for item in items:
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], int) and item[0] in old_to_new
                    and item[1] in ("co_occurs", "co_inferred") and isinstance(item[2], (int, float))):
                continue
            dst = old_to_new[item[0]]
            if dst != src and 0 <= float(item[2]) <= 1:
                rows.append((src, dst, item[1], float(item[2]), utc_now()))
    store.conn.executemany("INSERT OR IGNORE INTO memory_edges (src, dst, kind, strength, created_at)"
                           " VALUES (?, ?, ?, ?, ?)", rows)
