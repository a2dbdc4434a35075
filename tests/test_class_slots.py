"""The class slots of `twin.text.capture_slots` on invented sentences: a person in a role, the place of an activity
done now, a language's level; which pairs are one slot and which are not; and that capture keeps both memories of
such a slot (recall ranks the newest first: tests/test_recall_signals.py)."""

from __future__ import annotations

import pytest

from twin.learn.capture import capture
from twin.text.capture_slots import NAMED_ATTRIBUTES, read_slot, slot_change, slot_of
from twin.text.extractor import Candidate

SAME_SLOT = [
    ("Owner sees dentist Dr. Amadi Okafor every six months.", "Owner's dentist is Dr. Petra Lind.", "dentist"),
    ("Owner now goes to physio Clara Winter for the shoulder.", "Owner sees physical therapist Marco Bianchi.",
     "physiotherapist"),
    ("Owner does back physiotherapy at Reha Nord with therapist Ole Jensen.",
     "Owner's physiotherapist is Sanna Koivu.", "physiotherapist"),
    ("Owner takes maths lessons with tutor Hanna Berg.", "Owner's new tutor is Lukas Frei.", "tutor"),
    ("Owner's sister Mira sees therapist Ruth Adler.", "Owner's sister Mira has a new therapist, Tom Webb.",
     "therapist"),
    ("Owner swims at Stadtbad Mitte.", "Owner goes swimming every morning at Prinzenbad.", "swimming place"),
    ("Owner boulders three times a week at Ostbloc.", "Owner now climbs at Der Kegel.", "climbing place"),
    ("Owner plays tennis twice a week at TC Blau-Weiss.", "Owner now plays tennis at Rot-Gold Club.", "tennis place"),
    ("Owner's Spanish is at B2 level.", "Owner now speaks Spanish at C1.", "spanish level"),
    ("Owner reached A2 in Japanese.", "Owner now holds certified B1 Japanese.", "japanese level"),
]
"""`(older, newer, attribute)`: two statements of one slot with two values."""

NOT_ONE_SLOT = [
    ("Owner sees dentist Dr. Amadi Okafor.", "Owner sees dermatologist Dr. Ines Vogt."),  # two roles
    ("Owner sees therapist Ruth Adler.", "Owner's sister Mira sees therapist Tom Webb."),  # two people's
    ("Owner climbs at Ostbloc.", "Owner swims at Stadtbad Mitte."),  # two activities
    ("Owner's German is at B1.", "Owner's French is at B1."),  # two languages
    ("Owner plays tennis at TC Blau-Weiss.", "Owner plays chess at Café Kranz."),
]

NO_CLASS_SLOT = [
    "Owner also climbs at Der Kegel.",  # one more place, not a new one
    "Owner sometimes swims at Prinzenbad.",
    "Owner climbed at Der Kegel on Saturday.",  # an event
    "Owner runs a small bakery at Mehringdamm.",  # not an activity done at a place
    "Owner sees the dentist on 14 March.",  # an appointment, no person named
    "Owner swims 2 km on Tuesdays.",  # no place
    "Owner reads about Spanish history.",
]


@pytest.mark.parametrize(("older", "newer", "attribute"), SAME_SLOT)
def test_two_values_of_one_class_slot(older, newer, attribute):
    assert slot_of(older) == slot_of(newer) and slot_of(newer)[1] == attribute
    assert read_slot(older).value != read_slot(newer).value
    assert attribute in NAMED_ATTRIBUTES or attribute.endswith(" place")


@pytest.mark.parametrize(("one", "other"), NOT_ONE_SLOT)
def test_statements_of_two_slots(one, other):
    assert slot_of(one) is not None and slot_of(other) is not None and slot_of(one) != slot_of(other)


@pytest.mark.parametrize("sentence", NO_CLASS_SLOT)
def test_no_class_slot(sentence):
    assert slot_of(sentence) is None


def test_values_are_the_person_the_place_and_the_level():
    assert read_slot("Owner sees physiotherapist Ana Braga at Clínica Sul every Monday.").value == "Ana Braga"
    assert read_slot("Owner boulders twice a week at Lisboa Climbing Hub in Alcântara.").value == "Lisboa Climbing Hub"
    assert read_slot("Owner passed the Goethe exam and now holds certified B2 German.").value == "B2"
    assert read_slot("Owner's German is at A2 level, practised daily.").value == "A2"


@pytest.mark.parametrize(("older", "newer", "attribute"), SAME_SLOT[:3] + SAME_SLOT[5:7] + SAME_SLOT[8:9])
def test_capture_keeps_both_values_of_a_class_slot(store, older, newer, attribute):
    assert slot_change(newer, older) is None
    provenance = {"source_type": "muse", "captured_from": "test", "confidence": 0.6}
    with store.atomic():
        old = capture(store, "owner", Candidate("fact", older, 0.5, ()), "muse", "2026-11-01T10:00:00Z", provenance)
        new = capture(store, "owner", Candidate("fact", newer, 0.5, ()), "muse", "2026-11-20T10:00:00Z", provenance)
    assert new.superseded == [] and store.get(old.id).status == "active"


@pytest.mark.parametrize(("old", "new", "why"), [
    ("Owner uses Neovim as their editor.", "Owner switched from Neovim to Helix.",
     "same code editor, new value: Helix replaces Neovim"),
    ("Owner works as a nurse at Santa Maria hospital.", "Owner started a new job as a data analyst at Zalando.",
     "same job, new value: data analyst replaces nurse"),
    ("Owner works at Siemens.", "Owner took a new position at Bosch.", "same employer, new value: Bosch replaces Siemens"),
])
def test_a_new_job_or_tool_said_another_way_replaces_the_old_one(old, new, why):
    assert slot_change(new, old) == why

