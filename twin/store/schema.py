"""Named, transactional migrations of the SQLite store (STYLE.md: sqlite-utils migrations).

Each migration is a name and a tuple of statements, applied in one transaction and recorded in
`schema_migrations`; a migration already recorded is skipped, so `migrate()` is idempotent.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from twin.exceptions import StoreError
from twin.memory import KINDS, SENSITIVITIES, STATUSES, utc_now


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


INITIAL = (
    f"""CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        being_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN {_in(KINDS)}),
        content TEXT NOT NULL,
        source TEXT NOT NULL,
        importance REAL NOT NULL DEFAULT 0.4 CHECK (importance BETWEEN 0 AND 1),
        tags TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        last_accessed TEXT,
        hits INTEGER NOT NULL DEFAULT 0,
        sensitivity TEXT NOT NULL DEFAULT 'private' CHECK (sensitivity IN {_in(SENSITIVITIES)}),
        provenance TEXT NOT NULL DEFAULT '{{}}',
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN {_in(STATUSES)}),
        superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL,
        content_sha256 TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX memories_identity ON memories (being_id, content_sha256)",
    "CREATE INDEX memories_by_source ON memories (being_id, source)",
    "CREATE INDEX memories_by_created ON memories (being_id, created_at)",
    """CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, content='memories', content_rowid='id', tokenize='unicode61 remove_diacritics 2')""",
    # per-term document counts, for the IDF-weighted share of the query a memory matches (recall.py)
    "CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row')",
    """CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content) VALUES (new.id, new.content);
    END""",
    """CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END""",
    """CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO memories_fts (rowid, content) VALUES (new.id, new.content);
    END""",
    # One vector per memory; `seq` grows with every write and is the readers' catch-up watermark.
    """CREATE TABLE memory_embeddings (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id INTEGER NOT NULL UNIQUE REFERENCES memories(id) ON DELETE CASCADE,
        model_id TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        created_at TEXT NOT NULL
    )""",
    # Deleted vectors the index writer must scrub from the index before its next checkpoint.
    """CREATE TABLE index_tombstones (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        memory_id INTEGER NOT NULL
    )""",
    """CREATE TRIGGER memory_embeddings_tombstone AFTER DELETE ON memory_embeddings BEGIN
        INSERT INTO index_tombstones (memory_id) VALUES (old.memory_id);
    END""",
    """CREATE TABLE activity (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        being_id TEXT NOT NULL,
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL
    )""",
    """CREATE TABLE cursors (
        connector TEXT NOT NULL,
        being_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (connector, being_id, key)
    )""",
    """CREATE TABLE files_manifest (
        being_id TEXT NOT NULL,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('indexed', 'skipped')),
        reason TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (being_id, path)
    )""",
)

# The profile, reflection's signals and widget suggestions, and the model provider's daily call count.
PROFILE_SIGNALS_USAGE = (
    """CREATE TABLE profiles (
        being_id TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    # status: raised (passed the Hush gate; on the outbox until delivered_at) or held_back (reason says why)
    """CREATE TABLE signals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        being_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('insight', 'reminder')),
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        priority REAL NOT NULL DEFAULT 0.5,
        status TEXT NOT NULL CHECK (status IN ('raised', 'held_back')),
        reason TEXT,
        evidence TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        delivered_at TEXT
    )""",
    "CREATE INDEX signals_by_time ON signals (being_id, status, created_at)",
    """CREATE TABLE widget_suggestions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        being_id TEXT NOT NULL,
        type TEXT NOT NULL,
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE provider_usage (
        day TEXT NOT NULL,
        tier TEXT NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (day, tier)
    )""",
)

# Chat transcripts (seed 002: working memory, compaction) and the owners a chat connector has paired.
CHAT = (
    # one row per message; `update_id` (the Bot API's) makes handling an incoming message idempotent:
    # state received -> answered (the reply was sent) -> learned (pushed to learn())
    """CREATE TABLE chat_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        being_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'twin')),
        text TEXT NOT NULL,
        update_id INTEGER,
        state TEXT NOT NULL DEFAULT 'received' CHECK (state IN ('received', 'answered', 'learned')),
        shown_memories TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX chat_messages_update ON chat_messages (chat_id, update_id) WHERE update_id IS NOT NULL",
    "CREATE INDEX chat_messages_by_chat ON chat_messages (being_id, chat_id, id)",
    """CREATE TABLE chat_sessions (
        being_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        summary TEXT NOT NULL DEFAULT '',
        summarised_up_to INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (being_id, chat_id)
    )""",
    """CREATE TABLE chat_owners (
        connector TEXT NOT NULL,
        being_id TEXT NOT NULL,
        user_id INTEGER NOT NULL,
        paired_at TEXT NOT NULL,
        PRIMARY KEY (connector, being_id, user_id)
    )""",
)

EMAIL = (
    # the Gmail connector's per-thread state (its cursor besides the historyId): a thread is learned again only
    # when its newest message changed; `needs_reply` is the rule in twin.connectors.email_text
    """CREATE TABLE email_threads (
        being_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        last_message_id TEXT NOT NULL,
        last_from TEXT NOT NULL,
        last_message_at TEXT NOT NULL,
        message_count INTEGER NOT NULL,
        needs_reply INTEGER NOT NULL DEFAULT 0,
        reply_reason TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (being_id, thread_id)
    )""",
    "CREATE INDEX email_threads_needing_reply ON email_threads (being_id, needs_reply, last_message_at)",
)

LIFECYCLE = (
    # seed 003: every memory lives in a tier; the decay loop demotes idle ones to cold, a search re-promotes
    "ALTER TABLE memories ADD COLUMN tier TEXT NOT NULL DEFAULT 'warm' CHECK (tier IN ('warm', 'cold'))",
    # why a memory was superseded (the capture rule or the model's reason), and when it was last updated in place
    "ALTER TABLE memories ADD COLUMN supersede_reason TEXT",
    "ALTER TABLE memories ADD COLUMN updated_at TEXT",
    "CREATE INDEX memories_by_tier ON memories (being_id, tier)",
    # seed 003's graph: co_occurs edges to a new memory's top-3 vector neighbours, co_inferred ones from the dream
    # cycle; both ends cascade, so an edge goes with either of its memories
    """CREATE TABLE memory_edges (
        src INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        dst INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('co_occurs', 'co_inferred')),
        strength REAL NOT NULL CHECK (strength BETWEEN 0 AND 1),
        created_at TEXT NOT NULL,
        PRIMARY KEY (src, dst, kind)
    )""",
    "CREATE INDEX memory_edges_by_dst ON memory_edges (dst)",
    # the durable marker: a memory whose co_occurs edges are still to be written (seed 003: "a durable marker
    # guarantees the edges arrive"); the embedding worker writes them once the memory has a vector
    """CREATE TABLE edge_markers (
        memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL
    )""",
)

# Items waiting to be learned (twin.ingest): staged by a connector, consumed by the learn job that carries their ids.
# state: held (a chat message waiting for its reply) -> ready (to be queued) -> queued (a job holds the id);
# failed: its job failed for good (kept for `twin status` until forgotten or retried)
INGEST = (
    """CREATE TABLE ingest_items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        being_id TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('text', 'document', 'email', 'interests', 'forget')),
        source TEXT NOT NULL,
        ref TEXT,
        text TEXT NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        state TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('held', 'ready', 'queued', 'failed')),
        job_id TEXT,
        queued_at TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX ingest_items_by_state ON ingest_items (state, id)",
    "CREATE INDEX ingest_items_by_source ON ingest_items (being_id, source)",
)

SCRUB_DUE = ("store", "", "scrub_due")
"""The `state` key `(scope, being_id, key)` (the `cursors` key before `0013_state`) of the scrub marker: memory
text was deleted or rewritten and
`Store.scrub_deleted_text` has not run since (its value: when, UTC ISO-8601)."""
_MARK_SCRUB_DUE = ("INSERT OR REPLACE INTO cursors (connector, being_id, key, value, updated_at) VALUES ('store', '',"
                   " 'scrub_due', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));")
SCRUB_MARKERS = (
    # every path that deletes a memory or rewrites its content (forget, a file gone, a document re-learned, the
    # dream's merge, capture's update in place) leaves the old words in FTS segments and WAL pages until a scrub:
    # the marker is set in the same transaction, whichever code did it, so a scrub is never forgotten
    f"CREATE TRIGGER memories_scrub_due_delete AFTER DELETE ON memories BEGIN {_MARK_SCRUB_DUE} END",
    f"CREATE TRIGGER memories_scrub_due_update AFTER UPDATE OF content ON memories BEGIN {_MARK_SCRUB_DUE} END",
)

STATE_FLAGS = (
    ("gmail", "auth_error", "json"), ("gmail", "sync_error", "json"), ("gmail", "address", "text"),
    ("gmail", "last_sync", "time"),
    ("telegram", "token_refused", "time"), ("telegram", "pair_code", "json"), ("telegram", "owner_chat", "text"),
    ("telegram", "quiet_until", "time"), ("telegram", "forget:*", "json"), ("telegram", "stranger:*", "text"),
    ("provider", "budget_noted", "text"), ("store", "scrub_due", "time"),
    ("files", "roots", "json"), ("browser", "last_import", "time"), ("browser", "unreadable", "json"),
    ("reflection", "provider", "text"), ("reflection", "last_call_at", "time"),
    ("lifecycle", "last_decay", "time"), ("lifecycle", "last_dream", "time"),
)
"""`(scope, key GLOB pattern, kind)` of every flag `0013_state` moves out of `cursors` into `state`; what stays in
`cursors` is a position in a source (Gmail's historyId, Telegram's update id, a browser profile's visit id,
reflection's last memory id)."""
_NOW = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
_STATE_SCRUB_DUE = ("INSERT OR REPLACE INTO state (scope, being_id, key, kind, value, updated_at) VALUES ('store', '',"
                    f" 'scrub_due', 'time', {_NOW}, {_NOW});")
STATE = (
    """CREATE TABLE state (
        scope TEXT NOT NULL,
        being_id TEXT NOT NULL,
        key TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('text', 'time', 'json')),
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (scope, being_id, key)
    )""",
    # an empty value meant "cleared" in the cursors table (a refused token accepted again, quiet hours ended)
    *(f"INSERT INTO state (scope, being_id, key, kind, value, updated_at) SELECT connector, being_id, key, '{kind}',"
      f" value, updated_at FROM cursors WHERE connector = '{scope}' AND key GLOB '{key}' AND value != ''"
      for scope, key, kind in STATE_FLAGS),
    *(f"DELETE FROM cursors WHERE connector = '{scope}' AND key GLOB '{key}'" for scope, key, _ in STATE_FLAGS),
    "DROP TRIGGER memories_scrub_due_delete",
    "DROP TRIGGER memories_scrub_due_update",
    f"CREATE TRIGGER memories_scrub_due_delete AFTER DELETE ON memories BEGIN {_STATE_SCRUB_DUE} END",
    f"CREATE TRIGGER memories_scrub_due_update AFTER UPDATE OF content ON memories BEGIN {_STATE_SCRUB_DUE} END",
)

# seed 003: every memory belongs to a namespace (`twin.namespaces`); identity (the content hash, invariant 2) is per
# (being, namespace), so the same sentence in two namespaces is two memories. A store made before gets every memory,
# and every staged item, in 'default'. Names are checked in one place, twin.namespaces.checked, not here.
NAMESPACES = (
    "ALTER TABLE memories ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default'",
    "DROP INDEX memories_identity",
    "CREATE UNIQUE INDEX memories_identity ON memories (being_id, namespace, content_sha256)",
    "CREATE INDEX memories_by_namespace ON memories (being_id, namespace, created_at)",
    "ALTER TABLE ingest_items ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default'",
)

PEOPLE = (
    """CREATE TABLE people (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        token_sha256 BLOB NOT NULL UNIQUE,
        added_at TEXT NOT NULL
    )""",
)

PEOPLE_TELEGRAM = (
    "ALTER TABLE people ADD COLUMN telegram_user_id INTEGER",
    "ALTER TABLE people ADD COLUMN pair_code_sha256 BLOB",
    "ALTER TABLE people ADD COLUMN pair_expires_at TEXT",
    "CREATE UNIQUE INDEX people_by_telegram ON people (telegram_user_id) WHERE telegram_user_id IS NOT NULL",
    "CREATE UNIQUE INDEX people_by_pair_code ON people (pair_code_sha256) WHERE pair_code_sha256 IS NOT NULL",
)
"""A person's Telegram account (`twin.store.people`): their Telegram user id once paired, and the SHA-256 of the
one-time code `twin people pair` printed with its expiry (UTC ISO-8601) until it is used. On the person's row, so
`twin people remove` forgets both with them."""

PROJECTS = (
    """CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        owner_id TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE project_members (
        project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        person_id TEXT NOT NULL,
        added_at TEXT NOT NULL,
        PRIMARY KEY (project_id, person_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX project_members_by_person ON project_members (person_id)",
    """CREATE TABLE active_projects (
        person_id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE
    ) WITHOUT ROWID""",
)

PROJECT_NAMES_PER_OWNER = (
    """CREATE TABLE projects_rebuilt (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL COLLATE NOCASE,
        owner_id TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "INSERT INTO projects_rebuilt (id, name, owner_id, created_at) SELECT id, name, owner_id, created_at"
    " FROM projects",
    "DROP TABLE projects",
    "ALTER TABLE projects_rebuilt RENAME TO projects",
    "CREATE UNIQUE INDEX projects_by_owner_name ON projects (owner_id, name COLLATE NOCASE)",
)
"""A project's name is unique per owner (any case), no longer in the whole twin (`twin.store.projects`): `0019`
made it a column constraint, which SQLite cannot drop, so the table is rebuilt with its rows (SQLite's "other kinds
of table schema changes": a new table, the rows copied, the old one dropped, the new one renamed). It is in
`REBUILDS`: members, active pointers and bound sources reference `projects (id)` with `ON DELETE CASCADE`, and
dropping the old table with foreign keys on would delete them all."""

PROJECT_SOURCES = (
    """CREATE TABLE project_sources (
        kind TEXT NOT NULL CHECK (kind IN ('files', 'telegram_chat', 'gmail_label')),
        value TEXT NOT NULL,
        project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
        added_at TEXT NOT NULL,
        PRIMARY KEY (kind, value)
    ) WITHOUT ROWID""",
    "CREATE INDEX project_sources_by_project ON project_sources (project_id)",
)

PAGE_SESSIONS = (
    """CREATE TABLE page_sessions (
        secret_sha256 BLOB PRIMARY KEY,
        csrf_sha256 BLOB NOT NULL,
        key_sha256 BLOB NOT NULL,
        used_at TEXT NOT NULL
    ) WITHOUT ROWID""",
    "CREATE INDEX page_sessions_by_use ON page_sessions (used_at)",
)
"""The page's sessions (`twin.store.page_sessions`): the SHA-256 of the cookie's secret, of the CSRF token and of the
page key, and when the session was last used (UTC ISO-8601)."""

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("0001_initial", INITIAL),
    # ON DELETE SET NULL looks up referencing rows: without this index every delete scanned the table
    ("0002_superseded_by_index", ("CREATE INDEX memories_by_superseded ON memories (superseded_by)",)),
    ("0003_profile_signals_usage", PROFILE_SIGNALS_USAGE),
    ("0004_chat", CHAT),
    ("0005_email_threads", EMAIL),
    ("0006_lifecycle", LIFECYCLE),
    # forgetting the memory that superseded others makes them current again (found by a breaker run: they were
    # left hidden for ever, with `superseded_by` set to NULL by the foreign key)
    ("0007_forget_revives", ("""CREATE TRIGGER memories_forget_revives BEFORE DELETE ON memories BEGIN
        UPDATE memories SET status = 'active', superseded_by = NULL, supersede_reason = NULL
        WHERE superseded_by = old.id AND status = 'superseded';
    END""",)),
    # a breaker run found two current homes after forgetting: 0007 revived EVERY memory the forgotten one had
    # superseded. Now: a forgotten stale fact hands what it replaced on to its own successor (nothing revives);
    # a forgotten current fact revives only the newest it replaced, and the others point at that one.
    ("0008_forget_revives_newest", ("DROP TRIGGER memories_forget_revives", """
    CREATE TRIGGER memories_forget_revives BEFORE DELETE ON memories BEGIN
        UPDATE memories SET superseded_by = old.superseded_by
        WHERE superseded_by = old.id AND old.status = 'superseded' AND old.superseded_by IS NOT NULL;
        UPDATE memories SET superseded_by = (
            SELECT id FROM memories WHERE superseded_by = old.id AND status = 'superseded'
            ORDER BY created_at DESC, id DESC LIMIT 1)
        WHERE superseded_by = old.id AND status = 'superseded' AND id != (
            SELECT id FROM memories WHERE superseded_by = old.id AND status = 'superseded'
            ORDER BY created_at DESC, id DESC LIMIT 1);
        UPDATE memories SET status = 'active', superseded_by = NULL, supersede_reason = NULL
        WHERE superseded_by = old.id AND status = 'superseded';
    END""")),
    # what connectors hand to the learn worker waits here, not in Redis (invariant 5: no queued payload keeps text
    # once its job is done or its memories are forgotten); a learn job carries only the ids (twin.ingest)
    ("0009_ingest_items", INGEST),
    ("0010_scrub_markers", SCRUB_MARKERS),
    # a supersede_reason may quote the value of the memory that replaced it ("same home city, new value: Berlin
    # replaces Lisbon"): when that memory is forgotten and the chain is handed on (0008), the reason is rewritten
    # to name ids only, so no copy of the forgotten text stays (invariant 5)
    ("0011_forget_rewrites_reasons", ("DROP TRIGGER memories_forget_revives", """
    CREATE TRIGGER memories_forget_revives BEFORE DELETE ON memories BEGIN
        UPDATE memories SET superseded_by = old.superseded_by,
            supersede_reason = 'replaced by #' || old.superseded_by || ' (the memory between them was forgotten)'
        WHERE superseded_by = old.id AND old.status = 'superseded' AND old.superseded_by IS NOT NULL;
        UPDATE memories SET superseded_by = (
            SELECT id FROM memories WHERE superseded_by = old.id AND status = 'superseded'
            ORDER BY created_at DESC, id DESC LIMIT 1),
            supersede_reason = 'replaced by #' || (
            SELECT id FROM memories WHERE superseded_by = old.id AND status = 'superseded'
            ORDER BY created_at DESC, id DESC LIMIT 1) || ' (the memory that replaced both was forgotten)'
        WHERE superseded_by = old.id AND status = 'superseded' AND id != (
            SELECT id FROM memories WHERE superseded_by = old.id AND status = 'superseded'
            ORDER BY created_at DESC, id DESC LIMIT 1);
        UPDATE memories SET status = 'active', superseded_by = NULL, supersede_reason = NULL
        WHERE superseded_by = old.id AND status = 'superseded';
    END""")),
    # a diary line that names a source (a skipped file, a chat) says which one in `subject`, so forgetting that
    # source finds the line and rewrites the name out of it (twin.activity.unname)
    ("0012_activity_subject", ("ALTER TABLE activity ADD COLUMN subject TEXT",
                               "CREATE INDEX activity_by_subject ON activity (being_id, subject)"
                               " WHERE subject IS NOT NULL")),
    # cursors stay positions in a source; the flags and notes kept beside them (pairing codes, auth errors, budget
    # notes, the scrub marker, quiet hours, …) move to a typed `state` table (twin.store.state)
    ("0013_state", STATE),
    ("0014_namespaces", NAMESPACES),
    # the counts of `memory_stats` and `twin status` (by kind, status, tier and namespace) read this narrow index
    # instead of every row with its text (bench/page_latency.py at 100k: /v1/stats p50 462 -> 151 ms, /v1/status
    # 1154 -> 300 ms)
    ("0015_counted_index", ("CREATE INDEX memories_counted ON memories (being_id, namespace, status, kind, tier)",)),
    # the page's sessions outlive a restart of the API: their digests, never their secrets (twin.store.page_sessions)
    ("0016_page_sessions", PAGE_SESSIONS),
    # a memory's neighbours in its conversation (the one just before and after it from the same source,
    # `twin.store.turns`) are two index seeks; the index also serves every lookup by source the old one did
    ("0017_source_time_index", ("CREATE INDEX memories_by_source_time ON memories (being_id, source, created_at)",
                                "DROP INDEX IF EXISTS memories_by_source")),
    # the people the owner adds, each with a token of their own kept as a digest (twin.store.people)
    ("0018_people", PEOPLE),
    # projects, their members and each person's active project (twin.store.projects); a project's memories are a
    # namespace of their own (twin.namespaces.project_namespace)
    ("0019_projects", PROJECTS),
    # how many memories wait for a vector of the current model is two counts (memories, and this index's rows of
    # the model) instead of a join that reads every vector row (`Store.count_pending_embeddings`: 193 -> 3 ms at
    # 100k); `twin status` asks it every time, the daemon's backlog watch every 5 s. The embedding flush's "which
    # memories lack a vector" reads this index instead of each vector row too (416 -> 240 ms a batch at 100k)
    ("0020_embeddings_by_model",
     ("CREATE INDEX memory_embeddings_by_model ON memory_embeddings (model_id, memory_id)",)),
    # sources bound to a project (a files root, a Telegram chat, a Gmail label): what arrives there is staged into
    # the project's namespace (twin.store.project_sources, the rule in twin.ingest.bound_namespace); a project's
    # deletion drops its bindings (cascade)
    ("0021_project_sources", PROJECT_SOURCES),
    # a signal has a recipient (the twin's owner, or a member of the project it was drawn from) and, when drawn from
    # a project, its id: each recipient's Hush gate counts their own signals, and a project's deletion erases its
    # signals (twin.store.signals, twin.reflection.second_pass.reflect_project)
    ("0022_signal_recipients", ("ALTER TABLE signals ADD COLUMN recipient TEXT NOT NULL DEFAULT 'owner'",
                                "ALTER TABLE signals ADD COLUMN project_id TEXT",
                                "CREATE INDEX signals_by_recipient ON signals (being_id, recipient, status,"
                                " created_at)",
                                "CREATE INDEX signals_by_project ON signals (project_id)"
                                " WHERE project_id IS NOT NULL")),
    # a person's Telegram account, paired with a one-time code as the owner's is (twin.store.people)
    ("0023_people_telegram", PEOPLE_TELEGRAM),
    # a project's name is unique per owner, not in the whole twin: a person could learn by a 409 which names the
    # owner's projects have, and take a name the owner would want (twin.operations.scopes.project_for resolves a
    # name among the caller's own projects and those shared with them)
    ("0024_project_names_per_owner", PROJECT_NAMES_PER_OWNER),
    # a transcript's turn is embedded with the turn before it (twin.store.turns.turns_before): when that turn is
    # forgotten or rewritten, the next turn's vector holds its old text, so it is dropped (its tombstone scrubs the
    # index) and the embedding worker embeds the turn again (DESIGN.md invariant 5: forgetting reaches every copy)
    ("0025_turn_context", tuple(
        f"""CREATE TRIGGER memories_turn_context_{event} AFTER {clause} ON memories
        WHEN old.source LIKE 'chat:%' OR old.source LIKE 'telegram:%' BEGIN
            DELETE FROM memory_embeddings WHERE memory_id = (SELECT n.id FROM memories n WHERE n.being_id =
                old.being_id AND n.source = old.source AND n.namespace = old.namespace AND (n.created_at, n.id) >
                (old.created_at, old.id) ORDER BY n.created_at, n.id LIMIT 1);
        END""" for event, clause in (("forgotten", "DELETE"), ("rewritten", "UPDATE OF content")))),
)

REBUILDS = frozenset({"0024_project_names_per_owner"})
"""Migrations that rebuild a table other tables reference. They run with foreign keys off (set before their
transaction: SQLite ignores the pragma inside one), so dropping the old table cascades into nothing, and
`PRAGMA foreign_key_check` must find no dangling reference before they commit (SQLite's documented procedure for
schema changes `ALTER TABLE` cannot make)."""


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction; return the names applied.

    `conn` must be in autocommit mode (`isolation_level=None`). Raises `StoreError` when a
    migration fails (its transaction is rolled back) or the database has migrations this code
    does not know (written by a newer twin).
    """
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    unknown = done - {name for name, _ in MIGRATIONS}
    if unknown:
        raise StoreError(f"the database has migrations this twin does not know: {sorted(unknown)}; upgrade twin")
    applied = []
    for name, statements in MIGRATIONS:
        if name in done:
            continue
        with _foreign_keys_off(conn) if name in REBUILDS else contextlib.nullcontext():
            if _apply(conn, name, statements):
                applied.append(name)
    return applied


@contextlib.contextmanager
def _foreign_keys_off(conn: sqlite3.Connection) -> Iterator[None]:
    """Foreign keys off on `conn` (outside a transaction) for the block, then as they were."""
    was_on = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA foreign_keys = {'ON' if was_on else 'OFF'}")


def _apply(conn: sqlite3.Connection, name: str, statements: tuple[str, ...]) -> bool:
    """Run one migration in its own transaction and record it; False when another process recorded it while this
    one waited for the lock. Raises `StoreError` (rolled back) when a statement fails or, for one of `REBUILDS`,
    a reference is left dangling."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        if conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
            conn.execute("COMMIT")  # another process applied it while we waited for the lock
            return False
        for statement in statements:
            conn.execute(statement)
        if name in REBUILDS and conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
            raise sqlite3.IntegrityError("it would leave rows referencing nothing")
        conn.execute("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, utc_now()))
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK")
        raise StoreError(f"migration {name} failed: {exc}") from exc
    return True
