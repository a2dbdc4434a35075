"""Nothing secret reaches the model provider, whatever the secret's shape: passphrases after a password label,
values under a key that names a secret in a pasted JSON/YAML/.env text, codes said aloud, and secret-looking
items of the profile that reflection sends. Tested through a real OpenAI-protocol server (tests/fake_llm.py)
that records every request body, with texts written for these tests (not the examples the defects came with)."""

from __future__ import annotations

import json

import pytest

from twin.learn.learning import learn, learn_document
from twin.profile import Profile, save_profile
from twin.reflection.hush import HushGate, HushRules
from twin.reflection.second_pass import reflect


def sent_to_model(fake_llm) -> str:
    """Every request body the fake provider received, as one JSON text (escapes undone)."""
    return "\n".join(json.dumps(body, ensure_ascii=False) for _, _, body in fake_llm.requests)


def active(store) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in store.conn.execute(
        "SELECT content, sensitivity FROM memories WHERE status = 'active' ORDER BY id")]


SAID = [("My bank password is orange kettle sunrise.", "orange kettle sunrise"),
        ("The wifi password at the cabin is seven green frogs.", "seven green frogs"),
        ("Password: open up buttercup", "open up buttercup"),
        ("Mein Passwort ist blaue Tasse Regen.", "blaue Tasse Regen"),
        ("Le mot de passe du routeur est lune rouge matin.", "lune rouge matin"),
        ("my card pin is 4 digits: 8 0 6 2", "8 0 6 2"),
        ("I gave Jonas the code to my storage unit, it's 7731.", "7731"),
        ("Pool locker: 5528", "5528")]


@pytest.mark.parametrize(("text", "value"), SAID, ids=[v for _, v in SAID])
def test_a_said_secret_never_reaches_the_model_and_is_kept_sensitive(store, activity, fake_llm, provider, text,
                                                                     value):
    learn(store, activity, "owner", text + " Owner also bought a new kettle.", "muse", provider=provider)
    sent = sent_to_model(fake_llm)
    assert fake_llm.chat_requests() and "[redacted]" in sent and value not in sent
    holding = [(c, s) for c, s in active(store) if value in c]
    assert holding and all(s == "sensitive" for _, s in holding), active(store)


PASTED = [
    ('{\n  "user": "owner",\n  "password": "Lantern#Fog88",\n  "note": "Owner set up the garage opener."\n}\n',
     ["Lantern#Fog88"]),
    ("nas:\n  host: 192.168.1.20\n  password: quiet river stones\n  api_token: Zr81kQmW0pLx3vTn9yBs\n",
     ["quiet river stones", "Zr81kQmW0pLx3vTn9yBs"]),
    ("MQTT_HOST=broker.local\nMQTT_PASSWORD=Birch-Owl-51\n", ["Birch-Owl-51"]),
    ("service,login,password\nbank,owner,Maple&Stone9\nmail,owner@example.org,cloud nine dancer\n",
     ["Maple&Stone9", "cloud nine dancer"]),
]


@pytest.mark.parametrize(("text", "values"), PASTED, ids=["json", "yaml", "env", "csv"])
def test_a_pasted_structure_sends_no_value_under_a_secret_key(store, activity, fake_llm, provider, text, values):
    learn(store, activity, "owner", text, "muse", provider=provider)
    learn_document(store, "owner", text, "file:/home/owner/acc/conf.txt", "acc/conf.txt", 20, provider=provider,
                   activity=activity)
    sent = sent_to_model(fake_llm)
    assert len(fake_llm.chat_requests()) == 2
    assert not [v for v in values if v in sent], sent


def test_reflection_sends_no_secret_looking_profile_item(provider_env, store, activity, fake_llm, provider):
    save_profile(store, "owner", Profile(facts=[
        "Owner's work laptop password is silver fox jumps", "Owner's gym locker code is 2946",
        "Owner's phone PIN is 3 1 7 7", "Owner lives in Leipzig"], goals=["Owner wants to run a marathon"]), "2026-01-01T00:00:00Z")
    for content in ("Owner started pottery classes.", "Owner's cousin visits in May."):
        store.insert_memory("owner", "fact", content, "muse", 0.5)
    gate = HushGate(store, "owner", HushRules.from_settings(provider_env))
    assert reflect(store, activity, "owner", provider, gate, force=True).ran
    sent = sent_to_model(fake_llm)
    assert "pottery" in sent and "Leipzig" in sent and "marathon" in sent
    assert not [v for v in ("silver fox jumps", "2946", "3 1 7 7") if v in sent], sent
