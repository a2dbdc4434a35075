"""One behaviour for a secret, whatever the path, against a real OpenAI-protocol server (tests/fake_llm.py) and a
real store: learned with a model, the secret's sentence is stored locally as a sensitive memory with its value
while the model sees only placeholders; the chat reply shows the owner the value the model never saw;
reflection never shows the model a sensitive memory; asking for one secret shows only that secret."""

from __future__ import annotations

import json

import pytest
from fake_llm import Reply
from secret_corpus import bot_token, pem, pem_body, seed

from twin.chat import Conversation, hide_secrets, relevant_memories, restore_secrets
from twin.learn.learning import learn, learn_document
from twin.recall.hybrid import Recall
from twin.reflection.hush import HushGate, HushRules
from twin.reflection.second_pass import reflect
from twin.text.secret_request import only_what_was_asked

WIFI = "Weser-Lachs-" + "7714"
BANK = "Kiwi!Mango" + "42"
BOT_ID, BOT_SECRET = bot_token()
KEY_BODY = pem_body(4)
PHRASE = seed()


def sent_to_model(fake_llm) -> str:
    """Every request body the fake provider received, as one JSON text."""
    return "\n".join(json.dumps(body, ensure_ascii=False) for _, _, body in fake_llm.requests)


def pieces(value: str) -> list[str]:
    """The value and its lines and words of 8+ characters: none of them may reach the model."""
    return [value, *(p for p in {*value.splitlines(), *value.split()} if len(p.strip()) >= 8)]


def active_contents(store) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in store.conn.execute(
        "SELECT content, sensitivity FROM memories WHERE status = 'active' ORDER BY id")]


CHAT_TEXT = (f"I moved to Leipzig in May and I love the parks there.\nMy wifi password is {WIFI}.\n"
             f"The bot token is {BOT_ID}:{BOT_SECRET} and it runs on the NAS.\nHere is my deploy key:\n"
             f"{pem('OPENSSH', KEY_BODY)}\nMy seed phrase:\n{PHRASE}\nI prefer dark roast coffee over espresso.")
VALUES = (WIFI, BOT_SECRET, KEY_BODY.strip(), PHRASE)


def test_learning_with_a_model_keeps_each_secret_locally_and_sends_only_placeholders(store, activity, fake_llm,
                                                                                      provider):
    result = learn(store, activity, "owner", CHAT_TEXT, "telegram:42", provider=provider)
    assert result.created and fake_llm.chat_requests()
    sent = sent_to_model(fake_llm)
    assert "[redacted]" in sent and not [p for v in VALUES for p in pieces(v) if p in sent]
    rows = active_contents(store)
    for value in VALUES:
        holding = [(c, s) for c, s in rows if value in c]
        assert len(holding) == 1 and holding[0][1] == "sensitive", (value, rows)
    assert not any("redacted" in c.lower() for c, _ in rows)  # the model's placeholder memories were dropped
    ordinary = [c for c, s in rows if s != "sensitive"]
    assert any(c.startswith("Owner said:") and "Leipzig" in c for c in ordinary)  # the model's memory of it
    assert not [p for v in VALUES for p in pieces(v) for c in ordinary if p in c]


def test_the_same_secret_offline_and_with_a_model_is_one_sensitive_memory(store, activity, fake_llm, provider):
    learn(store, activity, "owner", f"My bank password is {BANK}.", "telegram:42", provider=provider)
    learn(store, activity, "owner", f"My bank password is {BANK}.", "telegram:42")  # offline, the same text
    rows = [(c, s) for c, s in active_contents(store) if BANK in c]
    assert rows == [("Owner's bank password is " + BANK + ".", "sensitive")]
    assert BANK not in sent_to_model(fake_llm)


def test_a_model_memory_holding_the_placeholder_is_not_stored_in_any_spelling(store, activity, fake_llm, provider):
    fake_llm.script(Reply(json.dumps({"memories": [
        {"kind": "fact", "content": "Owner's Wi-Fi password is [REDACTED].", "importance": 0.7},
        {"kind": "fact", "content": "Owner keeps the Wi-Fi password redacted in notes.", "importance": 0.3},
        {"kind": "fact", "content": "Owner has a Wi-Fi network at home.", "importance": 0.4}]})))
    learn(store, activity, "owner", f"My wifi password is {WIFI}. I have wifi at home.", "telegram:42",
          provider=provider)
    rows = active_contents(store)
    assert ("Owner's wifi password is " + WIFI + ".", "sensitive") in rows
    assert ("Owner has a Wi-Fi network at home.", "private") in rows
    assert not any("redacted" in c.lower() for c, _ in rows)


def test_the_word_redacted_without_a_secret_is_an_ordinary_memory(store, activity, fake_llm, provider):
    learn(store, activity, "owner", "The contract draft was redacted by the legal team on Monday.", "telegram:42",
          provider=provider)
    assert any("redacted by the legal team" in c for c, _ in active_contents(store))


def test_a_document_learned_with_a_model_keeps_its_key_block_whole_and_local(store, activity, fake_llm, provider):
    body = pem_body(12)
    text = (f"Server notes for the NAS.\nThe backup runs nightly at 02:00 to the garage disk.\n\nRoot key:\n"
            f"{pem('RSA', body)}\n\nThe UPS lasts about twenty minutes on battery.")
    learn_document(store, "owner", text, "file:/home/owner/nas.md", "nas.md", 20, provider=provider,
                   activity=activity)
    sent = sent_to_model(fake_llm)
    assert not [p for p in pieces(body.strip()) if p in sent]
    holding = [(c, s) for c, s in active_contents(store) if body.strip() in c]
    assert len(holding) == 1 and holding[0][1] == "sensitive" and holding[0][0].startswith("nas.md: Root key:")


def test_model_failure_falls_back_to_the_same_local_sensitive_memory(store, activity, fake_llm, provider):
    fake_llm.script(Reply(status=500), Reply(status=500), Reply(status=500), Reply(status=500))
    learn(store, activity, "owner", f"My wifi password is {WIFI}.", "telegram:42", provider=provider)
    assert ("Owner's wifi password is " + WIFI + ".", "sensitive") in active_contents(store)


# -- the chat reply ------------------------------------------------------------------------------------------
SECRETS_STORE = {
    "wifi": f"Owner's Wi-Fi password is {WIFI}.",
    "bank": f"Owner's online banking password is {BANK}.",
    "netflix": "Owner's Netflix password is Tr0ub4dor" + "&3.",
    "card_pin": "Owner's bank card PIN is 48" + "21.",
    "sim_pin": "The PIN of Owner's SIM card is 73" + "02.",
    "door": "The door code of the building is 47" + "19.",
}
ORDINARY = {"router": "Owner's Wi-Fi router is a FRITZ!Box in the hallway.",
            "bank_branch": "Owner's bank branch is on Kastanienallee."}


def fill(store, recall) -> dict[str, int]:
    ids = {}
    for name, content in {**SECRETS_STORE, **ORDINARY}.items():
        ids[name] = store.insert_memory("owner", "fact", content, "muse", 0.5,
                                        sensitivity="sensitive" if name in SECRETS_STORE else "private")
    recall.embed()
    return ids


def test_the_chat_model_sees_placeholders_and_the_owner_gets_the_value(provider_env, store, recall, fake_llm,
                                                                       provider):
    fill(store, recall)
    chat = Conversation(store, "owner", "42", provider_env, recall, provider)
    reply = chat.reply_to("What's my wifi password?")
    assert reply.by_model and WIFI in reply.text
    sent = sent_to_model(fake_llm)
    assert "[secret 1]" in sent and WIFI not in sent and BANK not in sent
    assert "Tr0ub4dor" not in sent and "4821" not in sent


def test_hide_and_restore_secrets_round_trip():
    lines, values = hide_secrets([SECRETS_STORE["wifi"], ORDINARY["router"], "Owner's mother's maiden name is Roth.",
                                  SECRETS_STORE["wifi"]], [True, False, True, True])
    assert lines == ["Owner's Wi-Fi password is [secret 1].", ORDINARY["router"], "[secret 2]",
                     "Owner's Wi-Fi password is [secret 1]."]
    assert restore_secrets("It is [Secret 1 ]; also [secret 2] and [secret 9].", values) == (
        f"It is {WIFI}; also Owner's mother's maiden name is Roth. and [secret 9].")


def test_reflection_never_shows_the_model_a_sensitive_memory(provider_env, store, activity, fake_llm, provider):
    for content in ("Owner started learning the cello in March.", "Owner's sister Ana moved to Porto.",
                    "Owner plans a trip to Lisbon in June.", "Owner reads about rust async runtimes."):
        store.insert_memory("owner", "fact", content, "muse", 0.5)
    secret_id = store.insert_memory("owner", "fact", SECRETS_STORE["bank"], "muse", 0.9, sensitivity="sensitive")
    hidden_id = store.insert_memory("owner", "fact", "Owner's safe holds the deed to the Kestrel flat.", "muse",
                                    0.9, sensitivity="sensitive")
    gate = HushGate(store, "owner", HushRules.from_settings(provider_env))
    result = reflect(store, activity, "owner", provider, gate, force=True)
    assert result.ran
    sent = sent_to_model(fake_llm)
    assert "cello" in sent and BANK not in sent and "online banking" not in sent and "Kestrel" not in sent
    assert f"#{secret_id} " not in sent and f"#{hidden_id} " not in sent


# -- asking for one secret -----------------------------------------------------------------------------------
ASKED = [("What's my wifi password?", {"wifi", "router"}), ("what is my Netflix password", {"netflix"}),
         ("Tell me my bank PIN", {"card_pin", "bank_branch"}), ("the door code please", {"door"}),
         ("What's the PIN of my SIM?", {"sim_pin"}), ("what's my online banking password?", {"bank", "bank_branch"}),
         ("What is my password?", set()), ("my PIN?", set()), ("what's my WLAN key?", {"wifi"})]


@pytest.mark.parametrize(("query", "expected"), ASKED, ids=[q for q, _ in ASKED])
def test_asking_for_one_secret_shows_only_that_secret(twin_env, store, recall, query, expected):
    ids = fill(store, recall)
    names = {v: k for k, v in ids.items()}
    shown = {names[h.memory.id] for h in relevant_memories(recall, "owner", query, 10)}
    assert shown & set(SECRETS_STORE) == expected & set(SECRETS_STORE), shown
    assert expected - set(SECRETS_STORE) <= shown  # what the query is about, non-sensitive, still shows


@pytest.mark.parametrize(("query", "expected"), ASKED[:6], ids=[q for q, _ in ASKED[:6]])
def test_asking_for_one_secret_without_vectors(store, query, expected):
    """Keyword-only recall (no embedder) keeps the same rule: the query's other words decide."""
    ids = {name: store.insert_memory("owner", "fact", content, "muse", 0.5,
                                     sensitivity="sensitive" if name in SECRETS_STORE else "private")
           for name, content in {**SECRETS_STORE, **ORDINARY}.items()}
    names = {v: k for k, v in ids.items()}
    shown = {names[h.memory.id] for h in relevant_memories(Recall(store, None, None), "owner", query, 10)}
    assert shown & set(SECRETS_STORE) == expected & set(SECRETS_STORE), shown


def test_non_sensitive_results_pass_unchanged(twin_env, store, recall):
    fill(store, recall)
    hits = recall.recall("owner", "wifi router bank branch", limit=10, include_sensitive=False)
    assert only_what_was_asked("wifi router bank branch", hits) == hits
