"""The stricter sensitivity wins wherever one memory replaces, updates or restates another: a private memory
that supersedes a sensitive one is sensitive (the newest PIN of a chain never shows in plain recall), an update in
place never lowers the level, a memory said again over a sensitive head keeps the head's level, and the model's
judgements follow the same rule. Real SQLite store, the real capture and learn paths, texts written here."""

from __future__ import annotations

import pytest

from twin.learn.capture import capture
from twin.learn.learning import learn
from twin.text.extractor import Candidate
from twin.text.sensitivity import stricter

NOW, LATER, LATEST = "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", "2026-11-30T12:00:00Z"
PROVENANCE = {"source_type": "muse", "captured_from": "test", "confidence": 0.6}


def _capture(store, content: str, now: str = NOW, **kwargs):
    with store.atomic():
        candidate = Candidate(content=content, kind="fact", importance=0.5, tags=[])
        return capture(store, "owner", candidate, "muse", now, PROVENANCE, **kwargs)


def _mark_sensitive(store, memory_id: int) -> None:
    store.conn.execute("UPDATE memories SET sensitivity = 'sensitive' WHERE id = ?", (memory_id,))


def test_stricter_orders_the_levels_and_needs_one():
    assert stricter("private", "sensitive") == "sensitive" == stricter("sensitive", "public")
    assert stricter("public", "internal") == "internal" and stricter("public") == "public"
    assert stricter("weird", "public") == "weird"  # unknown counts as private, above public
    with pytest.raises(ValueError):
        stricter()


@pytest.mark.parametrize(("old", "new"), [
    ("Owner lives in Lisbon.", "Owner moved to Berlin and now lives in Neukölln."),
    ("Owner has 2 cats.", "Owner has 3 cats."),
    ("Owner's therapist is Dr. Weiss.", "Owner's therapist is Dr. Aydin."),
])
def test_a_memory_that_supersedes_a_sensitive_one_is_sensitive(store, old, new):
    old_id = _capture(store, old).id
    _mark_sensitive(store, old_id)  # the owner marked it (or its secret was found)
    result = _capture(store, new, now=LATER)
    assert result.superseded == [old_id]
    assert store.get(result.id).sensitivity == "sensitive"


def test_a_private_memory_superseding_a_private_one_stays_private(store):
    old_id = _capture(store, "Owner has 4 plants.").id
    result = _capture(store, "Owner has 6 plants.", now=LATER)
    assert result.superseded == [old_id] and store.get(result.id).sensitivity == "private"


def test_an_update_in_place_never_lowers_the_level(store):
    first = _capture(store, "Owner's sister Mira works as a pilot.").id
    _mark_sensitive(store, first)
    refined = _capture(store, "Owner's sister Mira works as a pilot for a cargo airline.", now=LATER)
    assert refined.updated and refined.id == first and store.get(first).sensitivity == "sensitive"


def test_said_again_over_a_sensitive_head_keeps_the_heads_level(store):
    lisbon = _capture(store, "Owner lives in Lisbon.").id
    berlin = _capture(store, "Owner moved to Berlin and now lives in Neukölln.", now=LATER).id
    _mark_sensitive(store, berlin)
    again = _capture(store, "Owner lives in Lisbon.", now=LATEST)
    assert again.id == lisbon and again.superseded == [berlin]
    assert store.get(lisbon).sensitivity == "sensitive"


def test_the_models_judgements_follow_the_same_rule(store):
    pin = _capture(store, "Owner's bank PIN is 4827.").id
    assert store.get(pin).sensitivity == "sensitive"
    replaced = _capture(store, "Owner changed the bank PIN after the card was lost.", now=LATER,
                        judged={pin: ("contradicts", "a new PIN")})
    assert replaced.superseded == [pin] and store.get(replaced.id).sensitivity == "sensitive"
    note = _capture(store, "Owner's gym locker has a green padlock.").id
    _mark_sensitive(store, note)
    same = _capture(store, "Owner's gym locker has a green padlock from the hardware shop.", now=LATEST,
                    judged={note: ("refines", "more detail")})
    assert same.updated and store.get(note).sensitivity == "sensitive"


def test_a_chain_of_codes_learned_offline_stays_out_of_plain_listing(store, activity):
    for when, text in ((NOW, "My PIN is 0000."), (LATER, "my pin is 4 digits: 5 9 1 3"),
                       (LATEST, "Mein Passwort ist blaue Tasse Regen.")):
        learn(store, activity, "owner", text, "muse")
    rows = store.conn.execute("SELECT content, sensitivity, status FROM memories ORDER BY id").fetchall()
    assert rows and all(s == "sensitive" for _, s, _ in rows), rows


@pytest.mark.parametrize(("old", "new"), [
    ("Owner's PIN is 0000.", "Owner's phone SIM PIN is 5555."),
    ("Owner's bank PIN is 4821.", "Owner's PIN is 0000."),
    ("Owner's password is hunter22x.", "Owner's wifi password is blue-otter-42."),
    ("Owner's door code is 7291.", "Owner's garage door code is 1188."),
    ("Owner's mot de passe is Soleil42.", "Owner's bank mot de passe is Lune77."),
    ("Owner's pw is z9Lp3x.", "Owner's wifi pw is x8Kq2m."),
])
def test_a_credential_named_by_what_it_opens_is_another_credential(store, old, new):
    """A PIN, password or code qualified by what it opens ("phone SIM PIN", "wifi password") is not the same slot as
    an unqualified or differently qualified one: learning it hides nothing."""
    old_id = _capture(store, old).id
    result = _capture(store, new, now=LATER)
    assert result.superseded == [] and store.get(old_id).status == "active"


def test_the_same_credential_with_a_new_value_still_supersedes(store):
    old_id = _capture(store, "Owner's bank PIN is 4821.").id
    assert _capture(store, "Owner's bank PIN is 9090.", now=LATER).superseded == [old_id]


@pytest.mark.parametrize(("old", "new", "values"), [
    ("Owner's PIN is 1111.", "Owner's PIN is 2222.", ("1111", "2222")),
    ("Owner's door code is 4417.", "Owner's door code is 9082.", ("4417", "9082")),
])
def test_the_reason_a_secret_replaces_another_quotes_neither_value(store, old, new, values):
    """A secret replacing a secret is said by its rule alone: the reason shows wherever the new memory's id is
    (`twin learn`, the API's capture answer, recall's "replaces" reason) without anyone asking for sensitive
    memories, and is stored beside the old one. Found by a breaker run ("same pin, new value: 2222 replaces 1111")."""
    old_id = _capture(store, old).id
    result = _capture(store, new, now=LATER)
    assert result.superseded == [old_id] and store.get(result.id).sensitivity == "sensitive"
    stored = store.get(old_id).supersede_reason
    for said in (result.reason, stored, *(s.reason for s in result.supersessions)):
        assert said and "not shown (sensitive)" in said and not any(v in said for v in values), said
