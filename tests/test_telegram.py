"""The Telegram connector for real: `twin up` as a subprocess (private Redis, real workers, the real model) talking
to a local server that speaks the Bot API (tests/fake_telegram.py): replies that recall, strangers ignored,
restarts that neither lose nor double a message, every command, signals delivered once, split and paced under
flood control, pairing (the owner, and a person the owner added), and a bot token that never reaches a log or the
diary."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_telegram import TEST_BOT_TOKEN, FakeTelegram
from test_daemon import start, stop, wait_for

from twin.activity import Activity
from twin.memory import utc_now
from twin.store import Store
from twin.store.signals import ProposedSignal, list_signals, record_signal

ROOT = Path(__file__).resolve().parent.parent
TOKEN = TEST_BOT_TOKEN
OWNER, STRANGER = 42, 999


@pytest.fixture
def env(tmp_path, bot_api) -> dict:
    """A `twin up` environment on its embedded defaults plus the bot (owner: user 42)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_") and k != "NOTIFY_SOCKET"}
    env.update({"TWIN_DATA_DIR": str(tmp_path / "data"), "TWIN_CONFIG_DIR": str(tmp_path / "config"),
                "TWIN_RUNTIME_DIR": str(tmp_path / "run"), "TWIN_ENV_FILE": str(tmp_path / "config" / "env"),
                "TWIN_CONFIG": str(tmp_path / "config" / "twin.toml"), "TWIN_EMBED_THREADS": "1",
                "TWIN_TELEGRAM_BASE_URL": bot_api.url, "TWIN_TELEGRAM_ALLOWED_USERS": str(OWNER),
                "TWIN_TELEGRAM_POLL_TIMEOUT_S": "1", "TWIN_STOP_GRACE_S": "15", "PYTHONUNBUFFERED": "1",
                "TWIN_LOG_LEVEL": "DEBUG",  # the token must stay out of even the most verbose journal
                "HOME": str(tmp_path / "home")})  # no browser profiles of the developer's own
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "twin.toml").write_text("")
    env_file = tmp_path / "config" / "env"
    env_file.write_text(f"TWIN_TELEGRAM_BOT_TOKEN={TOKEN}\n")  # the secret lives in the env file
    env_file.chmod(0o600)
    return env


def store_of(env: dict) -> Store:
    return Store(Path(env["TWIN_DATA_DIR"]) / "twin.db")


def diary(env: dict) -> list[str]:
    with store_of(env) as store:
        return [line.text for line in Activity(store, "owner").recent(500)]


def memories_with(env: dict, word: str) -> list[str]:
    with store_of(env) as store:
        return [m.content for m in store.list_memories("owner", limit=500) if word in m.content]


def ask(bot_api: FakeTelegram, text: str, user_id: int = OWNER) -> str:
    """Send `text` as the owner and return the bot's next reply."""
    before = len(bot_api.sent)
    bot_api.send_user_message(text, user_id=user_id)
    return bot_api.wait_for_sent(before + 1, 30)[before][1]


def twin_cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "twin", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=True)


@pytest.fixture
def daemon(env, tmp_path, bot_api):
    log = tmp_path / "daemon.log"
    proc = start(env, log)
    wait_for(lambda: any(m == "getUpdates" for m in bot_api.methods()), 60, "the bot to poll")
    yield proc, log
    if proc.poll() is None:
        assert stop(proc) == 0, log.read_text()
    text = log.read_text()
    assert TOKEN not in text and "SECRET-bot-token" not in text  # never in the journal
    assert all("SECRET-bot-token" not in line for line in diary(env))  # nor in the diary


def test_owner_chat_recalls_learns_and_strangers_are_ignored(env, daemon, bot_api):
    assert ask(bot_api, "My sister Ana lives in Porto and works as a nurse.") == "Noted, I'll remember that."
    wait_for(lambda: memories_with(env, "Ana"), 30, "the message to be learned")

    bot_api.send_user_message("Hi, I am not the owner. /remember I own a yacht", user_id=STRANGER)
    bot_api.send_user_message("/remember I own a yacht", user_id=STRANGER)
    reply = ask(bot_api, "Where does my sister live?")
    assert "Owner's sister Ana lives in Porto and works as a nurse." in reply
    assert all(chat == OWNER for chat, _ in bot_api.sent)  # the stranger got nothing
    assert memories_with(env, "yacht") == []
    with store_of(env) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM chat_messages WHERE text LIKE '%yacht%'").fetchone()[0] == 0
        assert [m.source for m in store.list_memories("owner")] == [f"telegram:{OWNER}"]
    lines = diary(env)
    assert sum("ignored a message from a stranger (user 999)" in line for line in lines) == 1  # once a day
    wait_for(lambda: any(line.startswith("Telegram: answered") for line in diary(env)), 15, "the summary line")


def test_the_transcript_keeps_no_plain_secret_but_the_memory_does(env, daemon, bot_api):
    """A secret told in chat: the transcript stores it redacted (it goes into every later prompt); the whole message
    reaches learn() through a staged item that is gone once learned; the memory is `sensitive`, holds the value,
    and records the message it came from."""
    ask(bot_api, "My bike lock code is 4821 and the shed key is in the blue box.")
    wait_for(lambda: memories_with(env, "4821"), 30, "the message to be learned")
    reply = ask(bot_api, "What is my bike lock code?")
    assert "4821" in reply  # the owner asked for it by name

    def transcript() -> list[str]:
        with store_of(env) as store:
            return [r[0] for r in store.conn.execute("SELECT text FROM chat_messages ORDER BY id")]

    def staged() -> int:
        with store_of(env) as store:
            return store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone()[0]

    wait_for(lambda: len(transcript()) == 4, 15, "the reply to be recorded")
    wait_for(lambda: staged() == 0, 15, "the learned item to be released")  # released just after the memory commits
    with store_of(env) as store:
        rows = transcript()
        assert not any("4821" in row for row in rows)
        assert "[redacted]" in rows[0] and "[redacted]" in rows[3]
        [memory] = [m for m in store.list_memories("owner") if "4821" in m.content]
        first_row = store.conn.execute("SELECT id FROM chat_messages ORDER BY id LIMIT 1").fetchone()[0]
    assert memory.sensitivity == "sensitive"
    assert memory.provenance["captured_from"] == f"telegram:{OWNER}/message/{first_row}"


def test_a_restart_neither_loses_nor_doubles_a_message(env, daemon, bot_api, tmp_path):
    proc, log = daemon
    ask(bot_api, "I started learning the cello.")
    ask(bot_api, "My cello teacher is called Marta.")
    assert stop(proc) == 0
    bot_api.send_user_message("I practise every evening.")  # while twin is down
    bot_api.send_user_message("What is my teacher called?")
    proc = start(env, log)
    try:
        replies = bot_api.wait_for_sent(4, 60)
        time.sleep(2.5)  # a doubled answer would arrive by now
        assert len(bot_api.sent) == 4 and "Marta" in replies[3][1]
        assert bot_api.pending() == []  # every update acknowledged
        with store_of(env) as store:
            owner_rows = store.conn.execute("SELECT update_id, state FROM chat_messages WHERE role = 'owner'"
                                            " ORDER BY id").fetchall()
        assert [r[0] for r in owner_rows] == [1, 2, 3, 4]
    finally:
        assert stop(proc) == 0


def test_every_command(env, daemon, bot_api):
    assert ask(bot_api, "/help").startswith("I'm your twin")
    remembered = ask(bot_api, "/remember I'm allergic to penicillin.")
    assert remembered.startswith("Remembered:\n• #") and "Owner is allergic to penicillin." in remembered
    memory_id = int(remembered.split("#")[1].split()[0])
    assert ask(bot_api, "/memories relationship") == "No memories yet."
    assert ask(bot_api, "/memories banana").startswith("Kinds are:")
    assert ask(bot_api, "/memories") == f"#{memory_id} fact: Owner is allergic to penicillin."
    assert ask(bot_api, "/recall penicillin allergy").startswith(f"#{memory_id} Owner is allergic to penicillin.")
    assert ask(bot_api, "/forget").startswith("Forget these?\n• #")  # the memories of the last answer
    forgot = ask(bot_api, "/forget yes")  # says what went besides the memory: the rows of this chat that held it
    assert forgot.startswith(f"Forgot 1 memory(ies): #{memory_id}. Removed 1 memory (1 full-text row)")
    assert "transcript rows" in forgot
    with store_of(env) as store:
        # the /remember row and every answer that showed it; the owner's "/recall penicillin allergy" was a question
        assert not store.conn.execute("SELECT id FROM chat_messages WHERE text LIKE '%allergic to penicillin%'"
                                      " OR (role = 'twin' AND text LIKE '%penicillin%')").fetchall()
    assert memories_with(env, "penicillin") == []
    assert ask(bot_api, "/forget 99999") == "Nothing was forgotten. No memory #99999."
    assert ask(bot_api, "/reflect") == "I didn't reflect: no model provider is configured."
    assert "Forgot 1 memory(ies)" in ask(bot_api, "/activity")
    assert ask(bot_api, "/quiet 2").startswith("Quiet until ")
    assert ask(bot_api, "/quiet 0") == "Signals are on again."
    assert ask(bot_api, "/dance").startswith("I don't know /dance.")
    with store_of(env) as store:  # commands are answered, never taught
        assert store.list_memories("owner") == []


def raise_signal(env: dict, title: str, body: str) -> int:
    with store_of(env) as store:
        mid = store.insert_memory("owner", "fact", f"Owner noted {title}.", "muse", 0.5)
        return record_signal(store, "owner", ProposedSignal("reminder", title, body, 0.5, [mid]), "raised", None,
                             utc_now())


def test_signals_are_delivered_once_split_and_paced_under_flood_control(env, daemon, bot_api):
    proc, log = daemon
    bot_api.script_flood(1, times=1)  # the first attempt is refused: retry after 1 s
    long_body = " ".join(f"word{i}" for i in range(1800))  # ~ 14 000 characters: 4 messages
    signal_id = raise_signal(env, "Passport renewal", long_body)
    sent = bot_api.wait_for_sent(4, 60)
    assert all(len(text) <= 4096 for _, text in sent) and sent[0][1].startswith("💡 Passport renewal\nword0 ")
    assert " ".join(text for _, text in sent).split()[-1] == "word1799"
    attempts = [t for t, chat in bot_api.send_attempts if chat == OWNER]
    assert attempts[1] - attempts[0] >= 1.0  # the flood-controlled retry waited retry_after
    assert all(b - a >= 0.95 for a, b in itertools.pairwise(attempts[1:]))  # ≤ 1 message/s per chat
    wait_for(lambda: any(line == "Sent signal “Passport renewal” on Telegram." for line in diary(env)), 15,
             "the signal line")

    assert stop(proc) == 0
    proc = start(env, log)
    try:
        assert ask(bot_api, "/quiet 1").startswith("Quiet until")
        raise_signal(env, "Dentist", "Thursday at 9.")
        time.sleep(4)
        assert not any("Dentist" in text for _, text in bot_api.sent)  # quiet: it waits
        assert ask(bot_api, "/quiet 0") == "Signals are on again."
        wait_for(lambda: any("Dentist" in text for _, text in bot_api.sent), 20, "the held signal")
        assert sum("Passport renewal" in text for _, text in bot_api.sent) == 1  # never sent twice
        with store_of(env) as store:
            assert all(s.delivered_at for s in list_signals(store, "owner"))
            assert signal_id in [s.id for s in list_signals(store, "owner")]
    finally:
        assert stop(proc) == 0


def test_pairing_makes_the_first_sender_of_the_code_the_owner(env, tmp_path, bot_api):
    env = {**env, "TWIN_TELEGRAM_ALLOWED_USERS": ""}
    status = json.loads(twin_cli(env, "status", "--json").stdout)
    assert status["telegram"] == {"enabled": True, "owners": [], "last_update_id": None, "token_refused": None}
    assert any("twin telegram pair" in line for line in status["degraded"])
    code = twin_cli(env, "telegram", "pair").stdout.split("/start ")[1].split()[0]
    log = tmp_path / "daemon.log"
    proc = start(env, log)
    try:
        bot_api.send_user_message("/start 00000000", user_id=7)  # a wrong code: a stranger, ignored
        assert ask(bot_api, f"/start {code}", user_id=7).startswith("Paired: I'll answer only you here.")
        assert all(chat == 7 for chat, _ in bot_api.sent) and len(bot_api.sent) == 1
        bot_api.send_user_message(f"/start {code}", user_id=8)  # a used code pairs no one else
        assert ask(bot_api, "Hello twin, I like sailing.", user_id=7) == "Noted, I'll remember that."
        assert {chat for chat, _ in bot_api.sent} == {7}
        status = json.loads(twin_cli(env, "status", "--json").stdout)
        assert status["telegram"]["owners"] == [7]
        assert "7 (paired)" in twin_cli(env, "telegram", "owners").stdout
    finally:
        assert stop(proc) == 0
    assert TOKEN not in log.read_text()


FILLER = ["I had porridge with blueberries for breakfast.", "The weather in the morning was grey and windy.",
          "I finished reading a novel about lighthouse keepers.", "Our neighbour repainted the fence green.",
          "I walked to the market and bought fresh bread.", "The train to work was ten minutes late again.",
          "I fixed the squeaky hinge on the kitchen door.", "We watched a documentary about octopuses.",
          "I planted basil and thyme on the balcony.", "My laptop battery is getting weak.",
          "I called the plumber about the dripping tap.", "The bakery on the corner closed for renovation."]


@pytest.mark.parametrize("with_model", [False, True], ids=["offline", "with-model"])
def test_sixty_message_conversation_recalls_message_3_in_message_55(env, tmp_path, bot_api, fake_llm, with_model):
    """The issue's acceptance: a fact told in message 3 comes back in message 55, and a stranger is ignored.
    Run with `-s` to see the transcript."""
    if with_model:  # no reflection pass during the conversation: its signal would take a reply's place
        env = {**env, "TWIN_LLM_BASE_URL": fake_llm.url, "TWIN_REFLECT_FIRST_AFTER_S": "3600"}
    log = tmp_path / "daemon.log"
    proc = start(env, log)
    transcript = []
    try:
        wait_for(lambda: any(m == "getUpdates" for m in bot_api.methods()), 60, "the bot to poll")
        for n in range(1, 61):
            if n == 3:
                text = "My cello teacher is called Marta Ilves and she lives in Tartu."
            elif n == 55:
                text = "What is my cello teacher called?"
            elif n == 30:
                bot_api.send_user_message("/remember The owner's cello teacher is Bob.", user_id=STRANGER)
                transcript.append("stranger 999: /remember The owner's cello teacher is Bob.   (ignored)")
                text = FILLER[n % len(FILLER)]
            else:
                text = FILLER[n % len(FILLER)]
            reply = ask(bot_api, text)
            transcript.append(f"{n:2d} owner: {text}\n   twin:  {reply}")
            if n == 3:
                wait_for(lambda: memories_with(env, "Marta"), 30, "message 3 to be learned")
        print("\n".join(transcript))
        assert "Marta Ilves" in transcript[55].split("twin:")[1]  # the 56th entry is message 55 (+ the stranger)
        assert "Bob" not in " ".join(transcript[31:]) and memories_with(env, "Bob") == []
        assert all(chat == OWNER for chat, _ in bot_api.sent)
        def stored_messages() -> int:
            with store_of(env) as store:
                return store.conn.execute("SELECT COUNT(*) FROM chat_messages").fetchone()[0]

        wait_for(lambda: stored_messages() == 120, 15, "all 120 messages in the transcript")
        with store_of(env) as store:
            assert store.conn.execute("SELECT summary FROM chat_sessions").fetchone()[0]  # compacted past 50
    finally:
        assert stop(proc) == 0
    (tmp_path / "transcript.txt").write_text("\n".join(transcript))


def test_bad_input_never_stops_the_bot_and_a_refusing_chat_does_not_repeat_a_signal(env, tmp_path, bot_api):
    env = {**env, "TWIN_TELEGRAM_ALLOWED_USERS": f"{OWNER},43"}
    bot_api.refusing_chats.add(43)  # an allowed user who never opened the bot
    log = tmp_path / "daemon.log"
    proc = start(env, log)
    try:
        wait_for(lambda: any(m == "getUpdates" for m in bot_api.methods()), 60, "the bot to poll")
        assert ask(bot_api, "/quiet nan").startswith("/quiet 3 keeps signals back")
        assert ask(bot_api, "/forget 99999999999999999999999").startswith("Forget which?")
        assert ask(bot_api, "I like \ud800 odd text.") == "Noted, I'll remember that."  # a lone surrogate
        raise_signal(env, "Library books", "They are due on Wednesday.")
        wait_for(lambda: any("Library books" in text for _, text in bot_api.sent), 20, "the signal")
        time.sleep(3)
        assert sum("Library books" in text for _, text in bot_api.sent) == 1  # not resent for chat 43's refusal
        assert ask(bot_api, "Are you still there?").startswith("I don't remember")  # still answering
    finally:
        assert stop(proc) == 0
    assert "Forbidden" in log.read_text() and "Traceback" not in log.read_text()


def test_twin_up_answers_a_paired_person_as_themselves(env, daemon, bot_api):
    """`twin up` hands the bot the people's chat: a person paired with `twin people pair` is answered in their own
    chat, their `/remember` lands in their own scope (never the owner's), and removing them silences the bot."""
    twin_cli(env, "people", "add", "alice")
    code = twin_cli(env, "people", "pair", "alice").stdout.split("/start ")[1].split()[0]
    assert ask(bot_api, f"/start {code}", user_id=7).startswith("Paired: I'll answer you here as alice")
    assert ask(bot_api, "/remember Alice keeps the allotment shed key.", user_id=7).startswith("Remembered #")
    with store_of(env) as store:
        rows = store.conn.execute("SELECT namespace FROM memories WHERE content LIKE '%shed key%'").fetchall()
    assert len(rows) == 1 and rows[0][0].startswith("person:")
    assert ask(bot_api, "/recall shed key", user_id=7).endswith("Alice keeps the allotment shed key.")
    assert ask(bot_api, "/recall shed key").startswith("I remember nothing")  # the owner's reach: not hers
    twin_cli(env, "people", "remove", "alice")
    before = len(bot_api.sent)
    bot_api.send_user_message("/recall shed key", user_id=7)
    assert ask(bot_api, "/help").startswith("I'm your twin")
    assert [chat for chat, _ in bot_api.sent[before:]] == [OWNER]
