"""Sources bound to a project (issue 19): a files folder, a Telegram chat or a Gmail label bound to a project, so
what arrives there is staged, and so learned, into the project's namespace (`twin.ingest.bound_namespace`, the one
rule, applied by `twin.ingest.stage`); binding is the twin owner's alone, checked and shown by the operations every
interface calls (`twin.operations.project_sources`), over real HTTP and the real CLI; a project's deletion drops its
bindings. Then capture inside one scope through `learn()`, the path connectors take: a fact learned into a shared
project never reinforces, updates or supersedes the owner's private memory, and the reverse, whether the offline
rules or the model compare."""

from __future__ import annotations

import json

import httpx
import pytest
from fake_llm import Reply
from gmail_fixtures import message_json, thread_json
from in_process import twin_cli

from twin import ingest
from twin.connectors.email_text import parse_thread
from twin.connectors.gmail import thread_item
from twin.exceptions import Forbidden, InvalidInput, NotFound
from twin.ingest import Ingest, bound_namespace
from twin.learn.learning import learn, learn_document
from twin.namespaces import project_namespace
from twin.operations import Context, bind_source, create_project, delete_project, unbind_source
from twin.operations.people import add_person
from twin.operations.scopes import CALLER, Caller
from twin.settings import load_settings
from twin.store.project_sources import SourceBinding, all_bindings

BEING = "owner"
P1, P2 = "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01BX5ZZKBKACTAV9WEVGEMMVRZ"


@pytest.fixture
def ctx(twin_paths):
    context = Context.open(load_settings())
    yield context
    context.close()


def binding(kind: str, value: str, project: str = P1, at: str = "2026-12-01T10:00:00Z") -> SourceBinding:
    return SourceBinding(kind, value, project, at)


# -- the rule ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("source", "expected"), [
    ("file:/home/me/Household/boiler.md", project_namespace(P1)),
    ("file:/home/me/Household", project_namespace(P1)),
    ("file:/home/me/Household/kids/school.md", project_namespace(P2)),  # the deepest folder decides
    ("file:/home/me/Householder/notes.md", "default"),  # a sibling sharing the prefix is not under it
    ("file:/home/me/diary.md", "default"),
    ("telegram:-1001234", project_namespace(P2)),
    ("telegram:-10012345", "default"),
    ("telegram:42", "default"),
    ("browser", "default"),
    ("api", "default"),
])
def test_the_binding_decides_the_namespace_of_a_sources_item(source, expected):
    bindings = [binding("files", "/home/me/Household"), binding("files", "/home/me/Household/kids", P2),
                binding("telegram_chat", "-1001234", P2)]
    assert bound_namespace(Ingest(BEING, source, "x"), bindings) == expected


def test_a_thread_goes_by_its_earliest_bound_label_and_a_named_namespace_is_kept():
    bindings = [binding("gmail_label", "Label_7", P2, "2026-11-01T00:00:00Z"), binding("gmail_label", "Label_3")]
    mail = Ingest(BEING, "email:t1", "x", "email", extra={"labels": ["INBOX", "Label_3", "Label_7"]})
    assert bound_namespace(mail, bindings) == project_namespace(P2)
    assert bound_namespace(Ingest(BEING, "email:t2", "x", "email", extra={"labels": ["INBOX"]}), bindings) == "default"
    assert bound_namespace(Ingest(BEING, "email:t3", "x", "email"), bindings) == "default"  # an older item: no labels
    named = Ingest(BEING, "file:/home/me/Household/a.md", "x", namespace="work")
    assert bound_namespace(named, [binding("files", "/home/me/Household")]) == "work"


def test_a_thread_goes_by_a_label_bound_by_its_name_in_any_case_and_an_id_stays_exact():
    bindings = [binding("gmail_label", "household/BILLS"), binding("gmail_label", "Label_9", P2)]
    named = Ingest(BEING, "email:t1", "x", "email", extra={"labels": ["INBOX", "Label_3"],
                                                            "label_names": ["INBOX", "Household/Bills"]})
    assert bound_namespace(named, bindings) == project_namespace(P1)
    no_names = Ingest(BEING, "email:t2", "x", "email", extra={"labels": ["INBOX", "Label_3"]})  # labels.list failed
    assert bound_namespace(no_names, bindings) == "default"
    other_case_id = Ingest(BEING, "email:t3", "x", "email", extra={"labels": ["label_9"], "label_names": ["Travel"]})
    assert bound_namespace(other_case_id, bindings) == "default"


# -- binding, staging, deleting ---------------------------------------------------------------------------------
def test_a_bound_folder_stages_its_files_into_the_project_until_unbound(ctx, tmp_path):
    flat = create_project(ctx, "flat").id
    folder = tmp_path / "Household"
    folder.mkdir()
    shown = bind_source(ctx, "flat", "files", str(folder) + "/")
    assert [(s.kind, s.value) for s in shown.sources] == [("files", str(folder))]  # normalised
    assert bind_source(ctx, flat, "files", str(folder)).sources == shown.sources  # again: no change
    ids = ingest.stage(ctx.store, [
        Ingest(BEING, f"file:{folder}/boiler.md", "The boiler is serviced every March.", "document"),
        Ingest(BEING, f"file:{tmp_path}/diary.md", "A private diary.", "document"),
        Ingest(BEING, f"file:{folder}/work.md", "Standup at nine.", "document", namespace="work"),
        Ingest(BEING, f"file:{folder}/log.txt", "A line appended.", "document", extra={"appended": True})])
    staged = [(s.item.mode, s.item.source.rsplit("/", 1)[-1], s.item.namespace) for s in ingest.fetch(ctx.store, ids)]
    assert staged == [("forget", "boiler.md", "default"),  # what an older version taught the owner goes
                      ("document", "boiler.md", project_namespace(flat)), ("document", "diary.md", "default"),
                      ("document", "work.md", "work"), ("document", "log.txt", project_namespace(flat))]
    assert unbind_source(ctx, "flat", "files", str(folder)).sources == []
    later = ingest.stage(ctx.store, [Ingest(BEING, f"file:{folder}/meter.md", "Meter 77310.", "document")])
    assert ingest.fetch(ctx.store, later)[0].item.namespace == "default"
    with pytest.raises(NotFound):
        unbind_source(ctx, "flat", "files", str(folder))  # no longer bound


def test_a_file_changed_after_its_folder_was_bound_moves_into_the_project(twin_env, redis, tmp_path):
    from conftest import run_worker

    from twin.workers.bus import Bus

    folder = tmp_path / "Household"
    folder.mkdir()
    source = f"file:{folder}/boiler.md"
    ctx = Context.open(load_settings())
    try:
        def learned(text: str) -> None:
            ids = ingest.stage(ctx.store, [Ingest(BEING, source, text, "document", extra={"title": "boiler"})])
            Bus(redis).push(ctx.store, ids, BEING, "document")
            run_worker("learn")

        learned("The boiler is serviced every March by Calor Heating.")  # before the binding: the owner's own
        assert {m.namespace for m in ctx.store.list_memories(BEING, limit=50)} == {"default"}
        flat = create_project(ctx, "flat").id
        bind_source(ctx, flat, "files", str(folder))
        learned("The boiler is serviced every October by Calor Heating.")  # the file changed
        found = ctx.store.conn.execute("SELECT namespace, content FROM memories WHERE source = ?",
                                       (source,)).fetchall()
        assert found and all(ns == project_namespace(flat) for ns, _ in found)
        assert not any("March" in c for _, c in found)
    finally:
        ctx.close()


def test_binding_a_folder_moves_the_files_learned_before_and_unbinding_moves_them_back(twin_env, redis, tmp_path,
                                                                                       monkeypatch):
    """Two files learned into the owner's own memories by the real files connector and learn worker, then their
    folder bound: without the files changing, every memory of them is learned again into the project and none is
    left in the default scope (rows, keyword search of both scopes); a file beside the folder keeps its very rows.
    The move is staged with the binding, so a daemon that is not running loses nothing: its supervisor queues it
    (`Bus.queue_ready`) when it runs. Unbinding, with the daemon's bus there, moves them back at once."""
    import asyncio

    from conftest import run_worker

    from twin.connectors.files import FilesConnector
    from twin.operations.reads import search
    from twin.store import manifest
    from twin.workers.bus import Bus

    docs = tmp_path / "docs"
    (docs / "Household").mkdir(parents=True)
    (docs / "Household" / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced every March by Calor Heating "
                                                   "of Leith.\n")
    (docs / "Household" / "meter.md").write_text("# Meter\n\nThe electricity meter sits under the stairs and reads "
                                                  "77310 kWh.\n")
    (docs / "diary.md").write_text("# Diary\n\nOwner keeps a private diary about the Halvorsen negotiation.\n")
    monkeypatch.setenv("TWIN_FILES_ROOTS", str(docs))
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")  # keyword recall: the search needs no model
    settings = load_settings()
    household = {f"file:{docs / 'Household' / n}" for n in ("boiler.md", "meter.md")}
    ctx = Context.open(settings)
    try:
        def rows(namespace: str | None = None) -> dict[str, list[tuple[int, str, str]]]:
            found: dict[str, list[tuple[int, str, str]]] = {}
            for i, source, ns, content in ctx.store.conn.execute(
                    "SELECT id, source, namespace, content FROM memories ORDER BY id"):
                if namespace is None or ns == namespace:
                    found.setdefault(source, []).append((i, ns, content))
            return found

        def contents(query: str, project: str | None = None) -> set[str]:
            return {h.content for h in search(ctx, query, project=project).results}

        asyncio.run(FilesConnector(settings, ctx.store, Bus(redis), ctx.activity).scan_once())
        run_worker("learn")
        before = rows()
        assert household | {f"file:{docs / 'diary.md'}"} <= set(before)
        assert {ns for found in before.values() for _, ns, _ in found} == {"default"}
        learned = {s: sorted(c for _, _, c in before[s]) for s in household}
        flat = project_namespace(create_project(ctx, "flat").id)

        bound = bind_source(ctx, "flat", "files", str(docs / "Household"))  # no daemon: no bus
        assert bound.files_moving == 2
        assert any("2 files" in line for line in
                   [r[0] for r in ctx.store.conn.execute("SELECT text FROM activity WHERE kind = 'system'")])
        assert Bus(redis).queue_ready(ctx.store) == 4  # what the supervisor does when it runs: 2 forgets, 2 files
        run_worker("learn")
        moved = rows()
        assert {s: sorted(c for _, ns, c in moved[s] if ns == flat) for s in household} == learned
        assert not set(rows("default")) & household  # nowhere in the owner's own scope
        assert moved[f"file:{docs / 'diary.md'}"] == before[f"file:{docs / 'diary.md'}"]  # untouched, same ids
        assert not any("Calor" in c for c in contents("boiler serviced Calor Heating"))
        assert any("Calor" in c for c in contents("boiler serviced Calor Heating", project="flat"))
        assert ctx.store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone() == (0,)
        assert {manifest.get(ctx.store, BEING, s[5:]).state for s in household} == {"indexed"}
        assert bind_source(ctx, "flat", "files", str(docs / "Household")).files_moving == 0  # bound already

        ctx.bus = lambda: Bus(redis)  # the daemon runs: the move is queued at once
        assert unbind_source(ctx, "flat", "files", str(docs / "Household")).files_moving == 2
        run_worker("learn")
        back = rows()
        assert {s: sorted(c for _, ns, c in back[s] if ns == "default") for s in household} == learned
        assert rows(flat) == {}
        assert any("Calor" in c for c in contents("boiler serviced Calor Heating"))
        assert back[f"file:{docs / 'diary.md'}"] == before[f"file:{docs / 'diary.md'}"]
    finally:
        ctx.close()


def test_unbinding_an_inner_folder_moves_its_files_to_the_outer_project_as_they_are_now(ctx, tmp_path):
    """What a binding change stages for each learned file (`twin.ingest.restage`, the manifest rows with it): a
    forget where it was and in the owner's own scope, the file's text as it is on disk now where the bindings put
    it; a file gone since is forgotten there too and its row dropped; a file the connector skipped has no memories
    and stays as it is, and so does one under a files root that is missing (an unmounted disk); a file outside the
    folder is not read."""
    from twin.store import manifest
    from twin.store.manifest import ManifestEntry

    outer, inner = tmp_path / "Household", tmp_path / "Household" / "Kids"
    inner.mkdir(parents=True)
    (inner / "trip.md").write_text("# Trip\n\nThe school trip to Kelvingrove leaves on the ninth of May.\n")
    (outer / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced in March.\n")
    home, school = create_project(ctx, "home").id, create_project(ctx, "school").id
    bind_source(ctx, home, "files", str(outer))
    bind_source(ctx, school, "files", str(inner))
    ctx.settings = ctx.settings.model_copy(update={"files_roots": [tmp_path, inner / "Disk"]})  # Disk unmounted
    for path, state in ((inner / "trip.md", "indexed"), (inner / "gone.md", "indexed"),
                        (inner / "photo.md", "skipped"), (inner / "Disk" / "notes.md", "indexed"),
                        (outer / "boiler.md", "indexed")):  # learned since
        manifest.upsert(ctx.store, BEING, ManifestEntry(str(path), 1, 1, "ab" * 32, state,
                                                        "binary" if state == "skipped" else None))
    assert unbind_source(ctx, school, "files", str(inner)).files_moving == 2
    staged = ingest.fetch(ctx.store, [r[0] for r in ctx.store.conn.execute("SELECT id FROM ingest_items")])
    into = project_namespace(home)
    assert [(s.item.mode, s.item.source.rsplit("/", 1)[-1], s.item.namespace) for s in staged] == [
        ("forget", "gone.md", project_namespace(school)), ("forget", "gone.md", "default"), ("forget", "gone.md", into),
        ("forget", "trip.md", project_namespace(school)), ("forget", "trip.md", "default"),
        ("document", "trip.md", into)]
    assert "Kelvingrove" in staged[-1].item.text and staged[-1].item.extra["title"] == "Household/Kids/trip.md"
    assert manifest.get(ctx.store, BEING, inner / "gone.md") is None
    trip = manifest.get(ctx.store, BEING, inner / "trip.md")
    assert (trip.state, trip.size) == ("indexed", (inner / "trip.md").stat().st_size)  # the row of what was staged
    assert manifest.get(ctx.store, BEING, inner / "photo.md").state == "skipped"
    assert manifest.get(ctx.store, BEING, inner / "Disk" / "notes.md").sha256 == "ab" * 32
    assert manifest.get(ctx.store, BEING, outer / "boiler.md").sha256 == "ab" * 32  # outside the folder: unread


def test_a_folder_gone_since_it_was_bound_can_still_be_unbound(ctx, tmp_path):
    folder = tmp_path / "Moved"
    folder.mkdir()
    create_project(ctx, "flat")
    bind_source(ctx, "flat", "files", str(folder))
    folder.rmdir()
    assert unbind_source(ctx, "flat", "files", str(folder)).sources == []
    with pytest.raises(InvalidInput):
        bind_source(ctx, "flat", "files", str(folder))  # binding needs the folder there


def test_deleting_a_project_drops_its_bindings_and_erases_what_was_staged_for_it(ctx, tmp_path):
    flat = create_project(ctx, "flat").id
    bind_source(ctx, flat, "telegram_chat", "-1001234567890")
    bind_source(ctx, flat, "gmail_label", "Label_12")
    waiting = ingest.stage(ctx.store, [Ingest(BEING, "telegram:-1001234567890", "The flat's meter is 77310.")])
    assert ingest.fetch(ctx.store, waiting)[0].item.namespace == project_namespace(flat)
    removed = delete_project(ctx, flat).removed
    assert removed["staged_items"] == 1 and ingest.fetch(ctx.store, waiting) == []
    assert all_bindings(ctx.store) == []
    after = ingest.stage(ctx.store, [Ingest(BEING, "telegram:-1001234567890", "Owner's own words now.")])
    assert ingest.fetch(ctx.store, after)[0].item.namespace == "default"
    assert b"77310" not in ctx.settings.db_path.read_bytes()


def test_deleting_a_project_marks_the_files_it_learned_as_forgotten_so_a_change_learns_them_again(ctx, tmp_path):
    """A file learned into a project whose memories went with the project is not left "indexed" (unchanged, so
    never read again, with nothing of it left anywhere): it is marked forgotten, as `twin forget --source` does,
    and learned again when it changes. A file of the owner's own memories is untouched."""
    from twin.store import manifest
    from twin.store.manifest import FORGOTTEN_FILE_REASON, ManifestEntry

    flat = create_project(ctx, "flat").id
    shared, own = tmp_path / "landlord.md", tmp_path / "mine.md"
    for path, namespace in ((shared, project_namespace(flat)), (own, "default")):
        path.write_text("The landlord is Mrs Quigglesworth.\n")
        manifest.upsert(ctx.store, BEING, ManifestEntry(str(path), 30, 1, "ab" * 32, "indexed", None))
        ctx.store.insert_memory(BEING, "fact", f"{path.stem}: the landlord is Mrs Quigglesworth.",
                                f"file:{path}", 0.5, namespace=namespace)
    delete_project(ctx, flat)
    assert (manifest.get(ctx.store, BEING, shared).state, manifest.get(ctx.store, BEING, shared).reason) == (
        "skipped", FORGOTTEN_FILE_REASON)
    assert manifest.get(ctx.store, BEING, own).state == "indexed"


def test_a_gmail_label_binds_the_threads_that_carry_it(ctx):
    school = create_project(ctx, "school").id
    bind_source(ctx, school, "gmail_label", "Label_12")
    tagged = parse_thread(thread_json("t-school", [
        message_json("m1", subject="Term dates", body_text="Term starts on 8 January.", labels=("INBOX",)),
        message_json("m2", subject="Re: Term dates", body_text="Thanks.", labels=("Label_12", "SENT"))]),
        {"owner@example.com"})
    plain = parse_thread(thread_json("t-other", [message_json("m3", labels=("INBOX",))]), {"owner@example.com"})
    assert tagged.labels == ("INBOX", "Label_12", "SENT")
    ids = ingest.stage(ctx.store, [thread_item(BEING, tagged), thread_item(BEING, plain)])
    assert [(s.item.source, s.item.mode, s.item.namespace) for s in ingest.fetch(ctx.store, ids)] == [
        ("email:t-school", "forget", "default"), ("email:t-school", "email", project_namespace(school)),
        ("email:t-other", "email", "default")]


@pytest.mark.parametrize(("kind", "value", "field"), [
    ("folder", "/tmp", "kind"),
    ("files", "relative/path", "value"),
    ("files", "/no/such/folder/anywhere", "value"),
    ("files", "", "value"),
    ("telegram_chat", "the family group", "value"),
    ("telegram_chat", "12; DROP TABLE", "value"),
    ("gmail_label", "School\x1b[2J", "value"),
    ("gmail_label", "Bills\u202egnp.exe", "value"),
    ("gmail_label", "L" * 257, "value"),
])
def test_a_bad_source_is_refused_naming_the_field_and_binds_nothing(ctx, kind, value, field):
    create_project(ctx, "flat")
    with pytest.raises(InvalidInput) as refused:
        bind_source(ctx, "flat", kind, value)
    assert refused.value.field == field
    assert all_bindings(ctx.store) == []


def test_a_label_by_name_is_one_source_in_any_case_shown_as_given_and_unbound_in_any_case(ctx):
    create_project(ctx, "flat")
    create_project(ctx, "work")
    shown = bind_source(ctx, "flat", "gmail_label", "  Household/Bills 2026 – Zoë ")
    assert [(s.kind, s.value) for s in shown.sources] == [("gmail_label", "Household/Bills 2026 – Zoë")]
    assert bind_source(ctx, "flat", "gmail_label", "household/bills 2026 – ZOË").sources == shown.sources  # no change
    with pytest.raises(InvalidInput) as taken:
        bind_source(ctx, "work", "gmail_label", "HOUSEHOLD/BILLS 2026 – zoë")
    assert taken.value.code == "conflict"
    with pytest.raises(NotFound):
        unbind_source(ctx, "work", "gmail_label", "household/bills 2026 – zoë")  # bound, but not to work
    assert unbind_source(ctx, "flat", "gmail_label", "household/bills 2026 – zoë").sources == []
    assert all_bindings(ctx.store) == []


def test_a_source_binds_to_one_project_and_only_the_twins_owner_binds(ctx, tmp_path):
    create_project(ctx, "flat")
    create_project(ctx, "work")
    bind_source(ctx, "flat", "telegram_chat", "-42")
    with pytest.raises(InvalidInput) as taken:
        bind_source(ctx, "work", "telegram_chat", "-42")
    assert taken.value.code == "conflict"
    with pytest.raises(NotFound):
        bind_source(ctx, "nowhere", "telegram_chat", "-43")
    alice = add_person(ctx, "alice")
    token = CALLER.set(Caller(alice.id, alice.name))
    try:
        with pytest.raises(Forbidden):
            bind_source(ctx, "flat", "telegram_chat", "-44")
        with pytest.raises(Forbidden):
            unbind_source(ctx, "flat", "telegram_chat", "-42")
        own = create_project(ctx, "alices")  # her own project: still not her twin's sources to bind
        with pytest.raises(Forbidden):
            bind_source(ctx, own.id, "files", str(tmp_path))
    finally:
        CALLER.reset(token)
    with pytest.raises(Forbidden):  # the twin's owner, no member of alice's project
        bind_source(ctx, own.id, "files", str(tmp_path))
    assert [(b.kind, b.value) for b in all_bindings(ctx.store)] == [("telegram_chat", "-42")]


# -- over HTTP and the CLI --------------------------------------------------------------------------------------
def test_binding_over_http_shows_the_sources_to_the_twins_owner_alone(keyword_api, tmp_path):
    owner = keyword_api.client
    ctx = Context.open(load_settings())
    try:
        alice = add_person(ctx, "alice")
    finally:
        ctx.close()
    flat = owner.post("/v1/projects", json={"name": "flat"}).json()["id"]
    assert owner.post(f"/v1/projects/{flat}/members", json={"person": "alice"}).status_code == 200
    bound = owner.post(f"/v1/projects/{flat}/sources", json={"kind": "telegram_chat", "value": "-1001234"})
    assert bound.status_code == 200, bound.text
    assert bound.json()["sources"][0] | {"added_at": None} == {"kind": "telegram_chat", "value": "-1001234",
                                                              "added_at": None}
    assert owner.get("/v1/projects/flat").json()["sources"] == bound.json()["sources"]
    with httpx.Client(base_url=keyword_api.url, headers={"Authorization": f"Bearer {alice.token}"}) as member:
        assert member.get(f"/v1/projects/{flat}").json()["sources"] == []  # the owner's chats are not hers to see
        assert [p["sources"] for p in member.get("/v1/projects").json()] == [[]]
        refused = member.post(f"/v1/projects/{flat}/sources", json={"kind": "telegram_chat", "value": "-7"})
        assert refused.status_code == 403
        assert member.delete(f"/v1/projects/{flat}/sources",
                             params={"kind": "telegram_chat", "value": "-1001234"}).status_code == 403
    other = owner.post("/v1/projects", json={"name": "work"}).json()["id"]
    with httpx.Client(base_url=keyword_api.url, headers={"Authorization": f"Bearer {alice.token}"}) as member:
        assert member.get(f"/v1/projects/{other}").status_code == 403  # not hers: no name, no sources
        assert member.get(f"/v1/projects/{P2}").status_code == 404
        assert member.get(f"/v1/projects/{other}").json()["error"]["code"] == "forbidden"
    again = owner.post(f"/v1/projects/{other}/sources", json={"kind": "telegram_chat", "value": "-1001234"})
    assert again.status_code == 409
    bad = owner.post(f"/v1/projects/{flat}/sources", json={"kind": "files", "value": "docs"})
    assert bad.status_code == 422 and "absolute" in bad.text
    mixed = owner.post(f"/v1/projects/{flat}/sources", json={"kind": "gmail_label", "value": "INBOX",
                                                             "project": other})
    assert mixed.status_code == 422  # path and body name different projects
    gone = owner.delete(f"/v1/projects/{flat}/sources", params={"kind": "telegram_chat", "value": "-1001234"})
    assert gone.status_code == 200 and gone.json()["sources"] == []


def test_twin_project_bind_show_and_unbind(twin_paths, tmp_path, monkeypatch):
    folder = tmp_path / "Household"
    folder.mkdir()
    assert twin_cli("project", "create", "flat").returncode == 0
    monkeypatch.chdir(tmp_path)
    bound = twin_cli("project", "bind", "flat", "--files", "Household")  # relative to the shell's directory
    assert bound.returncode == 0, bound.stderr
    assert f"files {folder}" in bound.stdout
    assert "note: it is under no files root (TWIN_FILES_ROOTS)" in bound.stdout  # bound, but said: nothing is read
    assert "\\x0a" not in bound.stdout and "\n" not in bound.stdout.rstrip("\n")  # one line, no escaped break
    chat = twin_cli("project", "bind", "flat", "--telegram-chat", "-1001234")
    assert chat.returncode == 0 and "TWIN_TELEGRAM_ALLOWED_CHATS lists it" in chat.stdout
    for unseen in ("tab\tin", "zw\u200bx", "soft\u00adhyphen"):  # would read as another label
        refused = twin_cli("project", "bind", "flat", "--gmail-label", unseen)
        assert refused.returncode == 1 and "invisible" in refused.stderr, (unseen, refused.stderr)
    spam = twin_cli("project", "bind", "flat", "--gmail-label", "SPAM")
    assert spam.returncode == 0 and "twin never reads that label" in spam.stdout
    assert twin_cli("project", "unbind", "flat", "--gmail-label", "SPAM").returncode == 0
    shown = json.loads(twin_cli("project", "show", "flat", "--json").stdout)
    assert {(s["kind"], s["value"]) for s in shown["sources"]} == {("files", str(folder)),
                                                                  ("telegram_chat", "-1001234")}
    assert "telegram chat -1001234" in twin_cli("project", "list").stdout
    assert twin_cli("project", "bind", "flat").returncode == 2  # which source?
    for empty in ("", "  "):  # an unset variable ("$DIR"): refused, never this directory
        refused = twin_cli("project", "bind", "flat", "--files", empty)
        assert refused.returncode == 1 and "folder to bind" in refused.stderr, refused.stderr
    refused = twin_cli("project", "bind", "flat", "--gmail-label", "School\x1b]52;c;aGk=\x07")
    assert refused.returncode == 1 and "label" in refused.stderr
    assert twin_cli("project", "bind", "flat", "--gmail-label", "Household/Bills").returncode == 0
    assert twin_cli("project", "unbind", "flat", "--files", str(folder)).returncode == 0
    assert twin_cli("project", "unbind", "flat", "--files", str(folder)).returncode == 1  # not bound any more
    assert "gmail label Household/Bills" in twin_cli("project", "show", "flat").stdout
    assert twin_cli("project", "unbind", "flat", "--gmail-label", "household/bills").returncode == 0
    shown = json.loads(twin_cli("project", "show", "flat", "--json").stdout)
    assert [s["kind"] for s in shown["sources"]] == ["telegram_chat"]


# -- capture inside one scope, through learn() ------------------------------------------------------------------
def _extraction(*contents: str) -> Reply:
    return Reply(json.dumps({"memories": [{"kind": "fact", "content": c, "importance": 0.5} for c in contents],
                             "profile": {}}))


def _comparison(*pairs: dict) -> Reply:
    return Reply(json.dumps({"pairs": list(pairs)}))


def test_learning_into_a_project_never_touches_the_owners_private_memory_nor_the_reverse(store, activity):
    shared = project_namespace(P1)
    private = learn(store, activity, BEING, "I live in Lisbon.", "telegram:42").created
    assert len(private) == 1
    into_project = learn(store, activity, BEING, "I live in Berlin.", "telegram:-100", namespace=shared)
    assert into_project.created and not into_project.superseded and not into_project.updated
    assert store.get(private[0]).status == "active" and store.get(private[0]).namespace == "default"
    same = learn(store, activity, BEING, "I live in Lisbon.", "telegram:-100", namespace=shared)
    assert same.created and not same.reinforced and store.get(private[0]).hits == 0  # identity per scope
    back = learn(store, activity, BEING, "I live in Porto.", "telegram:42")  # supersedes the private one only
    assert back.superseded == [private[0]]
    assert store.get(same.created[0]).status == "active"  # the project's current fact, untouched by Porto
    assert store.get(into_project.created[0]).superseded_by == same.created[0]  # inside the project: as ever


def test_a_document_in_a_project_replaces_only_its_own_memories(store, activity):
    shared = project_namespace(P1)
    text = "The boiler is serviced every March by Calor Heating."
    own = learn_document(store, BEING, text, "file:/home/me/Household/boiler.md", "boiler", 12, activity=activity)
    moved = learn_document(store, BEING, "The boiler is serviced every October by Calor Heating.",
                           "file:/home/me/Household/boiler.md", "boiler", 12, activity=activity, namespace=shared)
    assert own.created and moved.created and not moved.superseded
    assert [store.get(i).status for i in own.created] == ["active"]
    assert {store.get(i).namespace for i in moved.created} == {shared}


def test_the_model_cannot_relate_a_project_fact_to_a_private_one(store, activity, fake_llm, provider):
    shared = project_namespace(P1)
    private = learn(store, activity, BEING, "Owner invests 400 euros a month in an ETF savings plan.",
                    "telegram:42").created[0]
    fake_llm.script(_extraction("Owner raised the monthly ETF savings plan to 600 euros."),
                    _comparison({"new": 1, "existing": private, "relation": "contradicts", "reason": "raised"}))
    result = learn(store, activity, BEING, "I raised my ETF savings plan to 600 euros a month.", "telegram:-100",
                   provider=provider, namespace=shared)
    assert result.created and not result.superseded and not result.updated
    assert store.get(private).status == "active"
    asked = [r["messages"][1]["content"] for r in fake_llm.chat_requests()
             if r["messages"][0]["content"].startswith("Task: comparison")]
    assert all(f"#{private}" not in text for text in asked)  # never shown the private memory at all
    fake_llm.script(_extraction("Owner invests 800 euros a month in an ETF savings plan."),
                    _comparison({"new": 1, "existing": result.created[0], "relation": "contradicts",
                                 "reason": "raised again"}))
    mine = learn(store, activity, BEING, "I invest 800 euros a month in my ETF savings plan.", "telegram:42",
                 provider=provider)
    assert result.created[0] not in mine.superseded and store.get(result.created[0]).status == "active"


def test_a_folder_bound_and_its_project_deleted_while_no_daemon_runs_keeps_the_owners_files(twin_env, redis, tmp_path,
                                                                                          monkeypatch):
    """Found by a breaker run: bound while the daemon was down, the project deleted, the daemon started: the files'
    memories were gone from every scope and the manifest still said "indexed" (never learned again). Deleting a
    project releases its folders first (`release_files`): the files go back to the owner's own memories with
    their text of now, and a file changed before the start is learned as it is then (a source's items in order)."""
    import asyncio

    from conftest import run_worker

    from twin.connectors.files import FilesConnector
    from twin.store import manifest
    from twin.workers.bus import Bus

    docs = tmp_path / "docs"
    (docs / "Household").mkdir(parents=True)
    key, meter = docs / "Household" / "key.md", docs / "Household" / "meter.md"
    key.write_text("# Key\n\nThe spare key hides under the blue Marigold flowerpot.\n")
    meter.write_text("# Meter\n\nThe electricity meter sits under the stairs and reads 77310 kWh.\n")
    monkeypatch.setenv("TWIN_FILES_ROOTS", str(docs))
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")
    settings = load_settings()
    ctx = Context.open(settings)
    try:
        def by_source() -> dict[str, set[tuple[str, str]]]:
            found: dict[str, set[tuple[str, str]]] = {}
            for source, ns, content in ctx.store.conn.execute("SELECT source, namespace, content FROM memories"):
                found.setdefault(source, set()).add((ns, content))
            return found

        asyncio.run(FilesConnector(settings, ctx.store, Bus(redis), ctx.activity).scan_once())
        run_worker("learn")
        before = by_source()
        assert {ns for found in before.values() for ns, _ in found} == {"default"} and len(before) == 2
        create_project(ctx, "p2")
        assert bind_source(ctx, "p2", "files", str(docs / "Household")).files_moving == 2  # no daemon: staged
        key.write_text("# Key\n\nThe spare key is with neighbour Mrs Okonkwo now.\n")  # changed meanwhile
        delete_project(ctx, "p2")
        Bus(redis).queue_ready(ctx.store)  # the daemon starts: its supervisor queues what waits ...
        asyncio.run(FilesConnector(settings, ctx.store, Bus(redis), ctx.activity).scan_once())  # ... and scans
        run_worker("learn")
        after = by_source()
        assert after[f"file:{meter}"] == before[f"file:{meter}"]  # back in the owner's own scope, as it was
        assert {ns for ns, _ in after[f"file:{key}"]} == {"default"}
        assert any("Okonkwo" in c for _, c in after[f"file:{key}"])
        assert not any("Marigold" in c for _, c in after[f"file:{key}"])
        assert {e.state for e in manifest.paths(ctx.store, BEING, str(docs)).values()} == {"indexed"}
        assert ctx.store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone() == (0,)
    finally:
        ctx.close()
