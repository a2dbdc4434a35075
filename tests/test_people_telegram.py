"""A person's Telegram account (issue 19), tested as an attacker would: the real Telegram connector in this process
(its own store thread and connection, the real Redis bus, keyword-only recall) polling the local server that speaks
the Bot API (tests/fake_telegram.py), beside the real API (tests/api_server.py) and the real MCP client against its
`/mcp`. A person pairs with `twin people pair NAME`'s one-time code; the bot then answers them as themselves
through the operations and `reach`: never the owner's user-global memories, never a project they are not in,
sensitive memories never in a chat; a removed person's account and token fail at once, their code too. And the
issue's "Done when" conversation of owner and partner over MCP and Telegram, ending in a scan of the data dir."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import httpx2
import pytest
from erasure import traces
from fake_telegram import TEST_BOT_TOKEN, FakeTelegram, origin_user
from in_process import add_person, twin_cli
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_clients import run_async
from project_world import OTHER, SHARED_PLAIN, seed
from redis import Redis

from twin.connectors.telegram import TelegramConnector
from twin.operations import Context
from twin.operations import people as people_ops
from twin.operations.member_chat import TelegramPeople
from twin.settings import load_settings
from twin.store import Store
from twin.workers.bus import Bus

TOKEN = TEST_BOT_TOKEN
OWNER, ALICE, MALLORY, STRANGER = 42, 7, 8, 999


class RunningBot:
    """The Telegram connector run as `twin up` runs it (with `TelegramPeople`), on a loop of its own thread."""

    def __init__(self, settings):
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.stop_event: asyncio.Event | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.stop_event = asyncio.Event()
        redis = Redis.from_url(self.settings.redis_url)
        bot = TelegramConnector(self.settings, None, Bus(redis), None, people=TelegramPeople(self.settings))
        try:
            self.loop.run_until_complete(bot.run(self.stop_event))
        except BaseException as exc:  # reported by stop()
            self.error = exc
        finally:
            redis.close()
            self.loop.close()

    def start(self) -> RunningBot:
        self.thread.start()
        return self

    def stop(self) -> None:
        while self.stop_event is None and self.thread.is_alive():
            time.sleep(0.01)
        self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(30)
        assert not self.thread.is_alive() and self.error is None, self.error


@pytest.fixture
def world(twin_env, bot_api, monkeypatch, keyword_api):
    """The API (keyword-only), the bot polling the fake Bot API (owner: user 42), and people alice and bob."""
    for key, value in {"TWIN_TELEGRAM_BOT_TOKEN": TOKEN, "TWIN_TELEGRAM_BASE_URL": bot_api.url,
                       "TWIN_TELEGRAM_ALLOWED_USERS": str(OWNER), "TWIN_TELEGRAM_POLL_TIMEOUT_S": "1"}.items():
        monkeypatch.setenv(key, value)
    bot = RunningBot(load_settings()).start()
    deadline = time.monotonic() + 30
    while "getUpdates" not in bot_api.methods():
        assert time.monotonic() < deadline, "the bot never polled"
        time.sleep(0.05)
    tokens = {name: add_person(name) for name in ("alice", "bob")}
    clients = {name: httpx.Client(base_url=keyword_api.url, headers={"Authorization": f"Bearer {t}"}, timeout=30)
               for name, t in tokens.items()}
    yield {"api": keyword_api, "owner": keyword_api.client, **clients, "tokens": tokens, "bot": bot}
    bot.stop()
    for client in clients.values():
        client.close()
    text = "\n".join(t for _, t in bot_api.sent)
    assert "SECRET-bot-token" not in text



def pair_code(name: str) -> str:
    """`twin people pair NAME` (in this process): the code it printed."""
    done = twin_cli("people", "pair", name)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("/start ")[1].split()[0]


def ask(bot_api: FakeTelegram, text: str, user_id: int, **fields) -> str:
    """Send `text` from `user_id` and return the bot's next reply (which must go to that user's chat)."""
    before = len(bot_api.sent)
    bot_api.send_user_message(text, user_id=user_id, **fields)
    chat, reply = bot_api.wait_for_sent(before + 1, 30)[before]
    assert chat == user_id, (chat, reply)
    return reply


def unanswered(bot_api: FakeTelegram, text: str, user_id: int) -> None:
    """`text` from `user_id` gets no reply: the owner's `/help` sent after it is the next thing the bot sends."""
    before = len(bot_api.sent)
    bot_api.send_user_message(text, user_id=user_id)
    assert ask(bot_api, "/help", OWNER).startswith("I'm your twin")
    assert [chat for chat, _ in bot_api.sent[before:]] == [OWNER]


def ids_in(reply: str) -> list[int]:
    return [int(line.split()[0][1:]) for line in reply.splitlines() if line.startswith("#")]


def test_a_paired_member_reaches_only_their_own_and_their_projects(world, bot_api):
    owner, alice, bob = world["owner"], world["alice"], world["bob"]
    mine, flat, studio, other = seed(owner, bob)

    # before pairing alice's account is a stranger's: a wrong code, or none, gets nothing
    unanswered(bot_api, "/recall allotment", ALICE)
    code = pair_code("alice")
    unanswered(bot_api, "/start 0123456789ab", ALICE)
    assert ask(bot_api, f"/start {code}", ALICE).startswith("Paired: I'll answer you here as alice")
    unanswered(bot_api, f"/start {code}", MALLORY)  # used once: pairs no one else
    listed = {line.split()[0]: line for line in twin_cli("people", "list").stdout.splitlines()}
    assert listed["alice"].endswith("; Telegram paired)") and "Telegram" not in listed["bob"]  # bob did not pair
    unanswered(bot_api, "/recall allotment", MALLORY)

    # the owner's user-global memories are invisible to her, sensitive or not, by query, list or id
    for query in ("allotment Juniper", "bank card PIN", "Owner"):
        assert ask(bot_api, f"/recall {query}", ALICE).startswith("I remember nothing")
    assert ask(bot_api, "/memories", ALICE) == "No memories yet."
    assert ask(bot_api, f"/forget {mine[0]} {mine[1]}", ALICE).startswith("Nothing was forgotten.")
    assert sorted(m["id"] for m in owner.get("/v1/recent", params={"max_sensitivity": "sensitive"}).json()) == sorted(mine)  # nothing of the owner's went

    # projects: only the one she is a member of; bob's by name does not resolve, by id is refused
    assert ask(bot_api, "/projects", ALICE).startswith("flat (member; members: owner, alice)")
    assert "no such project" in ask(bot_api, "/project studio", ALICE)  # a name out of reach tells nothing
    assert "not a member" in ask(bot_api, f"/project {studio}", ALICE)
    assert "no such project" in ask(bot_api, "/project 01JZZZZZZZZZZZZZZZZZZZZZZZ", ALICE)
    assert ask(bot_api, "/recall kiln fires", ALICE).startswith("I remember nothing")
    assert ask(bot_api, f"/forget {other}", ALICE).startswith("Nothing was forgotten.")
    assert bob.get(f"/v1/memories/{other}", params={"project": studio}).json()["content"] == OTHER

    # inside the project she reaches: its memories, its sensitive one never in a chat
    assert ask(bot_api, "/project flat", ALICE).startswith("Project flat is active")
    recalled = ask(bot_api, "/recall recycling alarm code Thursday", ALICE)
    assert recalled.endswith(SHARED_PLAIN) and "5519" not in recalled and "8264" not in recalled
    assert "5519" not in ask(bot_api, "/memories", ALICE)
    written = ask(bot_api, "/remember The flat's spare key is with Mrs Okoro.", ALICE)
    assert written.startswith("Remembered #") and written.endswith("in project flat.")
    seen = owner.post("/v1/search", json={"query": "spare key Okoro", "project": flat}).json()["results"]
    assert [h["content"] for h in seen] == ["The flat's spare key is with Mrs Okoro."]
    assert owner.post("/v1/search", json={"query": "spare key Okoro"}).json()["results"] == []  # not user-global
    # a forwarded "/forget" is someone else's words: never run
    key = ids_in(ask(bot_api, "/recall spare key", ALICE))
    assert ask(bot_api, f"/forget {key[0]}", ALICE, forward_origin=origin_user(5, "Eve", date=1)).startswith(
        "I'm owner's twin")
    assert owner.get(f"/v1/memories/{key[0]}", params={"project": flat}).status_code == 200

    # her own memories, outside any project: hers alone
    assert ask(bot_api, "/project off", ALICE).startswith("No project is active")
    ask(bot_api, "/remember Alice's pottery class is on Tuesdays.", ALICE)
    assert owner.post("/v1/search", json={"query": "pottery Tuesdays"}).json()["results"] == []
    assert [h["content"] for h in alice.post("/v1/search", json={"query": "pottery"}).json()["results"]] == [
        "Alice's pottery class is on Tuesdays."]

    # the owner is still answered as the owner, and nothing alice said is in the owner's transcript
    assert ask(bot_api, "/help", OWNER).startswith("I'm your twin")
    with Store(world["api"].settings.db_path) as store:
        rows = store.conn.execute("SELECT COUNT(*) FROM chat_messages WHERE chat_id = ?", (str(ALICE),)).fetchone()
        assert rows[0] == 0

    # removed: her account gets nothing from that moment, her code and token neither
    code = pair_code("alice")  # a fresh code, never used: removing her must void it too
    done = twin_cli("people", "remove", "alice")
    assert done.returncode == 0, done.stderr
    unanswered(bot_api, "/recall recycling", ALICE)
    unanswered(bot_api, "/help", ALICE)
    unanswered(bot_api, f"/start {code}", ALICE)
    unanswered(bot_api, f"/start {code}", MALLORY)
    assert alice.post("/v1/search", json={"query": "recycling", "project": "flat"}).status_code == 401
    with Store(world["api"].settings.db_path) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM people WHERE telegram_user_id = ?",
                                  (ALICE,)).fetchone()[0] == 0


def test_the_owners_chat_follows_the_owners_active_project_and_reaches_nothing_of_anyone_elses(world, bot_api):
    """The owner's active project is kept in the daemon (seed 003), so their Telegram sees what their API
    activated: `/recall`, `/memories` and a free reply union it with the owner's own memories, `/remember` writes
    into it, `/project` switches it for every device; another person's memories are never in the owner's chat."""
    owner, bob = world["owner"], world["bob"]
    mine, flat, studio, other = seed(owner, bob)
    before = ask(bot_api, "/recall recycling allotment", OWNER)
    assert SHARED_PLAIN not in before and "allotment" in before  # no active project: the owner's own alone

    owner.post(f"/v1/projects/{flat}/activate").raise_for_status()  # another device of the owner's
    recalled = ask(bot_api, "/recall recycling allotment", OWNER)
    assert SHARED_PLAIN in recalled and "plot 14" in recalled
    assert SHARED_PLAIN in ask(bot_api, "/memories", OWNER)
    assert "Thursday" in ask(bot_api, "When does the recycling go out?", OWNER)  # a free reply recalls it too
    written = ask(bot_api, "/remember The flat's boiler pressure should read 1.5 bar.", OWNER)
    assert written.startswith("Remembered")
    hits = owner.post("/v1/search", json={"query": "boiler pressure bar", "project": flat}).json()["results"]
    assert [h["content"] for h in hits] == ["The flat's boiler pressure should read 1.5 bar."]
    with Store(world["api"].settings.db_path) as store:  # into the project, not the owner's user-global memories
        assert store.conn.execute("SELECT namespace FROM memories WHERE content LIKE '%1.5 bar%'").fetchone()[0] == (
            f"project:{flat}")

    # /project in the chat is the same pointer the API reads
    assert ask(bot_api, "/project off", OWNER).startswith("No project is active")
    assert owner.get(f"/v1/projects/{flat}").json()["active"] is False
    assert SHARED_PLAIN not in ask(bot_api, "/recall recycling", OWNER)
    assert ask(bot_api, "/project flat", OWNER).startswith("Project flat is active")
    assert owner.get(f"/v1/projects/{flat}").json()["active"] is True
    assert "no such project" in ask(bot_api, "/project studio", OWNER)  # bob's name: not one of the owner's
    assert "not a member" in ask(bot_api, f"/project {studio}", OWNER)  # nor by its id
    assert "flat (owner, active" in ask(bot_api, "/project", OWNER)

    # bob's project memory is no memory of the owner's chat: not recalled, listed or forgotten by id
    assert OTHER not in ask(bot_api, "/recall kiln fires Saturdays", OWNER)
    assert ask(bot_api, f"/forget {other}", OWNER).startswith("Nothing was forgotten.")
    assert bob.get(f"/v1/memories/{other}", params={"project": studio}).json()["content"] == OTHER


def test_the_owners_active_project_unshared_by_its_owner_is_said_in_the_chat_never_written_around(world, bot_api):
    """The owner may be a member of a project another person owns; unshared while it is the owner's active project,
    the owner's `/remember` and `/recall` say so (nothing written into the owner's own memories instead) until
    `/project off`."""
    owner, bob = world["owner"], world["bob"]
    studio = bob.post("/v1/projects", json={"name": "studio"}).json()["id"]
    bob.post(f"/v1/projects/{studio}/members", json={"person": "owner"}).raise_for_status()
    bob.post("/v1/remember", json={"content": OTHER, "project": studio}).raise_for_status()
    assert ask(bot_api, "/project studio", OWNER).startswith("Project studio is active")
    assert OTHER in ask(bot_api, "/recall kiln Saturdays", OWNER)
    bob.delete(f"/v1/projects/{studio}/members/owner").raise_for_status()
    for command in ("/remember The kiln's spare shelf is in the loft.", "/recall kiln Saturdays"):
        refused = ask(bot_api, command, OWNER)
        assert refused.startswith("I can't:") and "no longer shared" in refused and "1240" not in refused
    assert owner.post("/v1/search", json={"query": "kiln spare shelf loft"}).status_code == 403  # the API: the same
    assert ask(bot_api, "/project off", OWNER).startswith("No project is active")
    assert owner.post("/v1/search", json={"query": "kiln spare shelf loft"}).json()["results"] == []  # not written
    assert ask(bot_api, "/remember The kiln's spare shelf is in the loft.", OWNER).startswith("Remembered")
    hits = owner.post("/v1/search", json={"query": "kiln spare shelf loft"}).json()["results"]
    assert [h["namespace"] for h in hits] == ["default"] and "loft" in hits[0]["content"]


def test_a_new_code_replaces_the_old_and_an_expired_one_pairs_no_one(world, bot_api):
    first = pair_code("alice")
    second = pair_code("alice")
    unanswered(bot_api, f"/start {first}", ALICE)  # replaced
    settings = load_settings()
    ctx = Context.open(settings)
    try:
        expired = people_ops.pair_telegram(ctx, "bob", now=people_ops.datetime(2020, 1, 1, tzinfo=people_ops.UTC))
    finally:
        ctx.close()
    unanswered(bot_api, f"/start {expired.code}", MALLORY)
    assert ask(bot_api, f"/start {second}", ALICE).startswith("Paired: I'll answer you here as alice")
    assert twin_cli("people", "pair", "nobody").returncode != 0


def _mcp(url: str, token: str, go):
    async def session():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            return await run_async(Client(streamable_http_client(f"{url}/mcp", http_client=http)), go)

    return asyncio.run(session())


BOILER = "The boiler is serviced every May by Hendrik Plumbing."
BINS = "The green bins go out on Wednesday nights at Quillfeather Court."
KEY = "The spare key hides under the blue Marigold flowerpot."
PRIVATE = "Owner's surprise gift for the partner is a Zanzibar kayak trip."


def test_done_when_two_people_share_unshare_and_delete_a_project(world, bot_api, capsys):
    """The issue's "Done when": owner and partner over MCP (each with their own token) and Telegram; a project
    created, shared, written by both, unshared (the partner's reads fail from that moment, on both), deleted (no
    trace of its text under the data dir). Prints the transcript of what each side saw (`pytest -s`)."""
    api, partner_token = world["api"], add_person("partner")
    seen: list[str] = []

    def mcp(who: str, token: str, tool: str, args: dict) -> dict | str:
        async def go(client: Client):
            return await client.call_tool(tool, args)

        result = _mcp(api.url, token, go)
        shown = f"ERROR {result.content[0].text}" if result.is_error else result.structured_content
        brief = shown if isinstance(shown, str) else (
            {"results": [h["content"] for h in shown["results"]]} if "results" in shown else
            {"projects": [p["name"] for p in shown["projects"]]} if "projects" in shown else
            {k: shown[k] for k in ("id", "name", "members", "removed") if k in shown})
        seen.append(f"[{who} · MCP] {tool} {args} -> {brief}")
        return shown

    def tg(who: str, user_id: int, text: str) -> str:
        reply = ask(bot_api, text, user_id)
        seen.append(f"[{who} · Telegram] {text} -> {reply!r}")
        return reply

    code = pair_code("partner")
    assert tg("partner", ALICE, f"/start {code}").startswith("Paired")
    assert tg("owner", OWNER, f"/remember {PRIVATE}").startswith("Remembered")

    home = mcp("owner", api.token, "project_create", {"name": "household"})["id"]
    assert mcp("owner", api.token, "project_share", {"project": home, "person": "partner"})["members"] == [
        "owner", "partner"]
    assert mcp("owner", api.token, "memory_capture", {"content": BOILER, "project": home})["id"]
    assert [p["name"] for p in mcp("partner", partner_token, "project_list", {})["projects"]] == ["household"]
    assert mcp("partner", partner_token, "memory_capture", {"content": KEY, "project": home})["id"]
    assert tg("partner", ALICE, "/project household").startswith("Project household is active")
    assert tg("partner", ALICE, f"/remember {BINS}").endswith("in project household.")
    assert BOILER in tg("partner", ALICE, "/recall boiler serviced")
    found = mcp("owner", api.token, "memory_search", {"query": "bins key boiler", "project": home})
    assert {h["content"] for h in found["results"]} == {BOILER, BINS, KEY}
    assert mcp("partner", partner_token, "memory_search", {"query": "surprise gift kayak"})["results"] == []
    assert tg("partner", ALICE, "/recall surprise gift kayak").startswith("I remember nothing")

    mcp("owner", api.token, "project_unshare", {"project": home, "person": "partner"})
    refused = mcp("partner", partner_token, "memory_search", {"query": "boiler", "project": home})
    assert isinstance(refused, str) and "not a member" in refused
    assert mcp("partner", partner_token, "project_list", {})["projects"] == []
    refused = tg("partner", ALICE, "/recall boiler bins key")  # her active project is gone: said, nothing read
    assert "no longer shared with you" in refused and "Hendrik" not in refused
    assert "no such project" in tg("partner", ALICE, "/project household")  # by name: out of reach now
    assert tg("partner", ALICE, "/project off").startswith("No project is active")
    assert tg("partner", ALICE, "/recall boiler bins key").startswith("I remember nothing")

    deleted = mcp("owner", api.token, "project_delete", {"project": home})
    assert deleted["removed"]["memories"] == 3
    assert "no such project" in mcp("owner", api.token, "memory_search", {"query": "boiler", "project": home})
    left = traces(api.settings.data_dir, [b"Hendrik Plumbing", b"Quillfeather", b"Marigold flowerpot"])
    seen.append(f"[scan] every file under the data dir for the project's text -> {left or 'nothing found'}")
    assert left == []
    assert tg("owner", OWNER, "/recall surprise gift").endswith(PRIVATE)  # the owner's own stays
    with capsys.disabled():
        print("\n" + "\n".join(seen))


def test_a_project_signal_reaches_a_paired_member_in_their_chat_while_they_are_a_member(world, bot_api):
    """A signal drawn from a shared project for a member (issue 19: reflection per project stores one per member,
    past each member's Hush gate) is sent to the private chat of the Telegram account they paired, not to the
    owner's; once they are no longer a member, their undelivered project signals are not sent."""
    from twin.activity import Activity
    from twin.memory import utc_now
    from twin.store.people import find_person
    from twin.store.signals import ProposedSignal, list_signals, record_signal

    owner = world["owner"]
    garden = owner.post("/v1/projects", json={"name": "garden"}).json()["id"]
    owner.post(f"/v1/projects/{garden}/members", json={"person": "alice"}).raise_for_status()
    assert ask(bot_api, f"/start {pair_code('alice')}", ALICE).startswith("Paired: I'll answer you here as alice")
    settings = load_settings()

    def raise_for_alice(title: str) -> int:
        with Store(settings.db_path) as store:
            alice = find_person(store, "alice").id
            mid = store.insert_memory("owner", "fact", f"The garden {title}.", "muse", 0.5,
                                      namespace=f"project:{garden}")
            return record_signal(store, "owner", ProposedSignal("reminder", title, "Cover the seedlings.", 0.5, [mid]),
                                 "raised", None, utc_now(), recipient=alice, project_id=garden)

    first = raise_for_alice("Frost tonight")
    chat, text = bot_api.wait_for_sent(len(bot_api.sent) + 1, 30)[-1]
    assert (chat, text) == (ALICE, "💡 Frost tonight\nCover the seedlings.")
    deadline = time.monotonic() + 10
    while not any("Sent signal “Frost tonight” to alice on Telegram." in a.text
                  for a in Activity(Store(settings.db_path).open(), "owner").recent(20)):
        assert time.monotonic() < deadline, "no diary line for the member's signal"
        time.sleep(0.1)

    owner.delete(f"/v1/projects/{garden}/members/alice").raise_for_status()
    second = raise_for_alice("Hail tomorrow")
    time.sleep(3)  # the delivery loop looks every second
    assert not any("Hail tomorrow" in t for _, t in bot_api.sent)
    assert all(chat != OWNER for chat, t in bot_api.sent if "Frost" in t)  # never the owner's chat
    with Store(settings.db_path) as store:
        alice = find_person(store, "alice").id
        delivered = {s.id: s.delivered_at for s in list_signals(store, "owner", recipient=alice)}
    assert delivered[first] and delivered[second] is None
