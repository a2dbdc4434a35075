"""A files folder bound to a project inside the real daemon (issue 19): `twin up` as a subprocess (its own Redis,
real workers, the files connector watching its root); a file under the bound folder is learned into the project's
namespace, found by a member over the daemon's HTTP API and by the owner through the project, never in the owner's
user-global recall without it, while a file beside the folder stays the owner's own. A folder bound while the daemon
runs (`twin project bind` through its API) moves the file learned there before into the project without the file
changing; deleting the project drops the binding."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
from test_daemon import start, stop, wait_for

from twin.api.token import read_token
from twin.namespaces import project_namespace
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
BOILER = "The flat's boiler is serviced every March by Calor Heating of Leith."
DIARY = "Owner keeps a private diary about the Halvorsen negotiation in Oslo."
SCHOOL = "Mia's school trip to the Kelvingrove museum leaves on the ninth of May."


def twin(env: dict, *args: str) -> subprocess.CompletedProcess:
    """`twin ARGS` as a subprocess (through the daemon's API when it answers)."""
    done = subprocess.run([sys.executable, "-m", "twin", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def memories(env: dict) -> dict[str, tuple[str, str]]:
    """`{source: (namespace, content)}` of every memory, read from the store."""
    with Store(Path(env["TWIN_DATA_DIR"]) / "twin.db") as store:
        rows = store.conn.execute("SELECT source, namespace, content FROM memories WHERE status = 'active'")
        return {s: (n, c) for s, n, c in rows}


def scopes(env: dict, source: str) -> set[str]:
    """The namespaces that hold a memory of `source`, read from the store."""
    with Store(Path(env["TWIN_DATA_DIR"]) / "twin.db") as store:
        return {n for (n,) in store.conn.execute("SELECT namespace FROM memories WHERE source = ?", (source,))}


def settled(env: dict, sources: set[str]) -> bool:
    """True once every file of `sources` has a memory and every memory its vector."""
    db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
    if not db.exists():
        return False
    with Store(db) as store:
        counts = store.counts("owner")
    return sources <= set(memories(env)) and counts["memories"] == counts["embedded"]


def api_ready(url: str, token_path: Path) -> str | None:
    """The API's token once the daemon's API answers with it (and its recall has opened), else None."""
    token = read_token(token_path)
    if token is None:
        return None
    try:
        health = httpx.get(f"{url}/v1/health", headers={"Authorization": f"Bearer {token}"}, timeout=5)
    except httpx.TransportError:
        return None
    return token if health.status_code == 200 and not health.json()["loading"] else None


def contents(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {r["content"] for r in response.json()["results"]}


def test_a_file_under_a_bound_folder_is_learned_into_the_project(daemon_env, tmp_path):
    docs = Path(daemon_env["TWIN_FILES_ROOTS"])
    (docs / "Household").mkdir()
    (docs / "Kids").mkdir()
    flat = twin(daemon_env, "project", "create", "flat", "--json")  # no daemon yet: in this process, on the store
    flat_id = json.loads(flat.stdout)["id"]
    twin(daemon_env, "people", "add", "partner", "--token-file", str(tmp_path / "partner-token"))
    twin(daemon_env, "project", "share", "flat", "partner")
    twin(daemon_env, "project", "bind", "flat", "--files", str(docs / "Household"))
    (docs / "Household" / "boiler.md").write_text(f"# Boiler\n\n{BOILER}\n")
    (docs / "diary.md").write_text(f"# Diary\n\n{DIARY}\n")
    boiler, diary, school = (f"file:{docs / 'Household' / 'boiler.md'}", f"file:{docs / 'diary.md'}",
                             f"file:{docs / 'Kids' / 'trip.md'}")
    url = f"http://127.0.0.1:{daemon_env['TWIN_API_PORT']}"
    log = tmp_path / "daemon.log"
    proc = start(daemon_env, log)
    try:
        wait_for(lambda: settled(daemon_env, {boiler, diary}), 180, "both files learned and embedded")
        found = memories(daemon_env)
        assert found[boiler][0] == project_namespace(flat_id) and "boiler" in found[boiler][1].lower()
        assert found[diary][0] == "default"
        token = wait_for(lambda: api_ready(url, Path(daemon_env["TWIN_CONFIG_DIR"]) / "api-token"), 120, "the API")
        owner = httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"})
        partner = httpx.Client(base_url=url, timeout=60, headers={
            "Authorization": f"Bearer {(tmp_path / 'partner-token').read_text().strip()}"})
        question = {"query": "when is the boiler serviced by Calor Heating?"}
        assert not any("Calor" in c for c in contents(owner.post("/v1/search", json=question)))  # user-global only
        assert any("Calor" in c for c in contents(owner.post("/v1/search", json={**question, "project": "flat"})))
        assert any("Calor" in c for c in contents(partner.post("/v1/search", json={**question, "project": "flat"})))
        diary_question = {"query": "private diary Halvorsen negotiation", "project": "flat"}
        assert not any("Halvorsen" in c for c in contents(partner.post("/v1/search", json=diary_question)))

        (docs / "Kids" / "trip.md").write_text(f"# Trip\n\n{SCHOOL}\n")  # learned as the owner's own first
        wait_for(lambda: settled(daemon_env, {school}), 120, "the file in the folder not bound yet")
        assert memories(daemon_env)[school][0] == "default"
        bound = twin(daemon_env, "project", "bind", "flat", "--files", str(docs / "Kids"))  # through the daemon
        assert f"files {docs / 'Kids'}" in bound.stdout and "1 file learned before is moving into it" in bound.stdout
        wait_for(lambda: scopes(daemon_env, school) == {project_namespace(flat_id)}, 120,
                 "the file learned before its folder was bound moved into the project, unchanged on disk")
        wait_for(lambda: settled(daemon_env, {school}), 120, "its moved memories embedded")
        trip = {"query": "Kelvingrove museum school trip", "project": "flat"}
        assert any("Kelvingrove" in c for c in contents(partner.post("/v1/search", json=trip)))

        twin(daemon_env, "project", "delete", "flat")  # its folders' files are the owner's again, as they are now
        wait_for(lambda: scopes(daemon_env, boiler) == scopes(daemon_env, school) == {"default"}, 120,
                 "the files of the deleted project's folders learned again as the owner's own")
        shown = twin(daemon_env, "project", "list").stdout
        assert "flat" not in shown
        owner.close()
        partner.close()
    finally:
        assert stop(proc) == 0, log.read_text()[-3000:]
    with Store(Path(daemon_env["TWIN_DATA_DIR"]) / "twin.db") as store:
        assert store.conn.execute("SELECT COUNT(*) FROM project_sources").fetchone()[0] == 0


def test_a_bound_telegram_chat_is_learned_into_the_project(daemon_env, tmp_path):
    """The owner's messages in a bound group chat, and a /remember there, go into the project; their private
    chat's stay user-global."""
    from fake_telegram import TEST_BOT_TOKEN, FakeTelegram

    token, owner, group = TEST_BOT_TOKEN, 42, -1001234
    env = {**daemon_env, "TWIN_TELEGRAM_ALLOWED_USERS": str(owner), "TWIN_TELEGRAM_ALLOWED_CHATS": f"{group},{owner}",
           "TWIN_TELEGRAM_POLL_TIMEOUT_S": "1"}
    env_file = Path(env["TWIN_ENV_FILE"])
    env_file.write_text(f"TWIN_TELEGRAM_BOT_TOKEN={token}\n")
    env_file.chmod(0o600)
    flat_id = json.loads(twin(env, "project", "create", "flat", "--json").stdout)["id"]
    twin(env, "project", "bind", "flat", "--telegram-chat", str(group))
    log = tmp_path / "daemon.log"
    with FakeTelegram(token=token) as bot_api:
        env["TWIN_TELEGRAM_BASE_URL"] = bot_api.url
        proc = start(env, log)
        try:
            wait_for(lambda: any(m == "getUpdates" for m in bot_api.methods()), 60, "the bot to poll")
            bot_api.send_user_message("The flat's Wi-Fi network is called Gecko Lounge.", user_id=owner,
                                      chat_id=group)
            bot_api.send_user_message("My sister Ana lives in Porto and works as a nurse.", user_id=owner)
            wait_for(lambda: {f"telegram:{group}", f"telegram:{owner}"} <= set(memories(env)), 60,
                     "both chats' messages learned")
            bot_api.send_user_message("/remember The flat's bins go out on Thursday evenings.", user_id=owner,
                                      chat_id=group)
            wait_for(lambda: any("bins" in c for _, c in memories(env).values()), 60, "the /remember in the group")
        finally:
            assert stop(proc) == 0, log.read_text()[-3000:]
    with Store(Path(env["TWIN_DATA_DIR"]) / "twin.db") as store:
        rows = store.conn.execute("SELECT source, namespace, content FROM memories").fetchall()
    shared = project_namespace(flat_id)
    assert {(n, "Gecko" in c, "bins" in c) for s, n, c in rows if s == f"telegram:{group}"} == {
        (shared, True, False), (shared, False, True)}  # its messages and an explicit /remember there
    assert {n for s, n, _ in rows if s == f"telegram:{owner}"} == {"default"}
