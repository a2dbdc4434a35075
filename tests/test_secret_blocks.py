"""A secret's block ends where its secret ends: a seed phrase never crosses a blank line nor takes a following
sentence that holds no part of it (in any BIP-39 language), short secret lines are kept, and structured text is
spelled out with its labels (`twin.text.structured_lines`). Pure functions on texts written here."""

from __future__ import annotations

import csv

import pytest
from secret_corpus import seed

from twin.text.extractor import extract
from twin.text.sensitivity import find_secrets
from twin.text.structured_lines import spell_out

FOLLOWING = ["Owner renewed the domain in March.", "Owner ate lunch above the harbour.",
             "Oscar wants a new bicycle."]


@pytest.mark.parametrize("language", ["english", "french", "spanish"])
@pytest.mark.parametrize("after", FOLLOWING)
@pytest.mark.parametrize("gap", ["\n\n", "\n", "\n  \n"])
def test_a_seed_phrase_ends_with_its_words(language, after, gap):
    words = seed(language).split()
    for label in ("Recovery phrase:\n", "Seed words: ", ""):
        text = f"{label}{' '.join(words[:6])}\n{' '.join(words[6:])}{gap}{after}\n"
        spans = [text[s.start:s.end] for s in find_secrets(text)]
        assert spans and all(after.split()[0] not in span for span in spans), (text, spans)
        assert all(w in " ".join(spans) for w in words)
        memories = extract(text, document_title="wallet.txt")
        assert [m.sensitive for m in memories if after.rstrip(".") in m.content] == [False], memories


def test_short_secret_lines_are_kept():
    for text in ("PIN: 4827", "Gym locker: 3391", "pw: kx9!Lm2"):
        memories = extract(text)
        assert len(memories) == 1 and memories[0].sensitive, (text, memories)


def test_spell_out_names_columns_and_keys_and_leaves_prose():
    assert spell_out("name,role\nAnna,lead\nBen,\n") == "name: Anna, role: lead.\n\nname: Ben.\n\n"
    assert spell_out('  "DB_PASSWORD": "x9-Birch-Owl",') == "  db password: x9-Birch-Owl"
    assert spell_out("PIN = 4827") == "PIN: 4827"
    prose = "Owner bought milk, bread, cheese\nand eggs, ham, jam at the market.\n"
    assert spell_out(prose) == prose
    assert spell_out("password: required\nmax_tokens: 4096\n") == "password: required\nmax_tokens: 4096\n"


UNREADABLE_ROWS = {"a field over the csv field size limit": 'mail,"' + "x" * (csv.field_size_limit() + 1) + '"',
                   "a line break in an unquoted field": 'mail\r,"x9-Birch-Owl"'}


@pytest.mark.parametrize("bad", UNREADABLE_ROWS.values(), ids=UNREADABLE_ROWS)
def test_a_table_row_the_csv_module_cannot_read_ends_its_table_and_raises_nothing(bad):
    text = f"site,password\nbank,Tr0ub4dor&3x\n{bad}\nshop,Qu1et-Falcon-77\n\nsite;pin\ngym;4827\n"
    assert [(s.kind, text[s.start:s.end]) for s in find_secrets(text)] == [("password", "Tr0ub4dor&3x"),
                                                                           ("pin", "4827")]
    assert spell_out(text) == (f"site: bank, password: Tr0ub4dor&3x.\n\n{bad}\nshop,Qu1et-Falcon-77\n\n"
                               "site: gym, pin: 4827.\n\n")


def test_an_indented_row_whose_first_cell_is_quoted_is_read_as_cells():
    text = 'site,password\n  "bank, main",Tr0ub4dor&3x\n'
    assert [(s.kind, text[s.start:s.end]) for s in find_secrets(text)] == [("password", "Tr0ub4dor&3x")]
    assert spell_out(text) == "site: bank, main, password: Tr0ub4dor&3x.\n\n"


VALUE_FACTS = ["My order number is 303-7719024-5581123.",
               "The SHA-1 of the backup is 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12.",
               "My library card number is 20054471.", "Unsere Kundennummer lautet 88-1204-7.",
               "Le numéro de dossier est 2026/4471-B.", "The serial of the dishwasher is SMV-4HCX48E."]


@pytest.mark.parametrize("text", VALUE_FACTS)
def test_a_sentence_whose_value_is_a_code_is_a_fact(text):
    memories = extract(text)
    value = text.rstrip(".").split()[-1]
    assert len(memories) == 1 and value in memories[0].content and not memories[0].sensitive, memories


@pytest.mark.parametrize("text", ["Door code 7720", "Spind: 4410", "the code to my bike lock, it's 5512"])
def test_a_door_or_locker_code_is_a_sensitive_fact(text):
    memories = extract(text)
    assert len(memories) == 1 and memories[0].sensitive, memories


def test_numbers_alone_stay_unmemorable():
    for text in ("10:30 12.5 3-4 ok", "x=1; y=2; z=3 ok", "4471 2231 9981 0042"):
        assert extract(text) == [], text
