"""The offline extractor (twin/text/extractor.py): splitting, filtering, first person -> "Owner", kinds, importance,
limits, document mode, and robustness on odd input. Pure functions: no fixtures, no I/O."""

from __future__ import annotations

import random
import time

import pytest
from case_tables import case_tables

from twin.text.extractor import KINDS, MAX_PER_CALL, Candidate, extract, split_sentences
from twin.text.sensitivity import infer_sensitivity

CASES = case_tables("extractor")
"""The case tables of this module (tests/data/extractor_cases.toml)."""


def contents(text: str, **kwargs) -> list[str]:
    return [c.content for c in extract(text, **kwargs)]


def only(text: str) -> Candidate:
    found = extract(text)
    assert len(found) == 1, found
    return found[0]


# --- first person -> "Owner" ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("said", "memory"), CASES["test_brief_examples"])
def test_brief_examples(said, memory):
    assert contents(said) == [memory]


@pytest.mark.parametrize(("said", "memory"), CASES["test_first_person_is_rewritten_with_verb_agreement"])
def test_first_person_is_rewritten_with_verb_agreement(said, memory):
    assert contents(said) == [memory]


@pytest.mark.parametrize("said", CASES["test_sentences_without_first_person_are_kept_as_written"])
def test_sentences_without_first_person_are_kept_as_written(said):
    assert contents(said) == [said]


@pytest.mark.parametrize(("said", "memory"), CASES["test_english_with_per_or_de_is_rewritten"])
def test_english_with_per_or_de_is_rewritten(said, memory):
    """"per" and "de" are foreign hints too; on a tie an English-only first-person word decides."""
    assert contents(said) == [memory]


def test_third_person_fact_gets_capital_and_period():
    assert contents("porto is lovely in the spring") == ["Porto is lovely in the spring."]


@pytest.mark.parametrize("said", CASES["test_non_english_is_kept_untranslated"])
def test_non_english_is_kept_untranslated(said):
    assert contents(said) == [said]


@pytest.mark.parametrize(("said", "memory"), [
    ("Je me lève tous les jours à six heures.", "Owner se lève tous les jours à six heures."),
    ("Ich wohne seit drei Jahren in Berlin.", "Owner wohnt seit drei Jahren in Berlin."),
])
def test_german_and_french_first_person_is_rewritten_untranslated(said, memory):
    """Seed 000's third person in the language it was said in (these two were stored in the first person)."""
    assert contents(said) == [memory]


# --- splitting ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), CASES["test_split_sentences"])
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_newlines_end_chat_lines_but_hard_wrapped_prose_is_joined():
    chat = "hey so i finally booked the flight to Tokyo for the third of October\nmy boss approved the leave\nok"
    assert split_sentences(chat) == ["hey so i finally booked the flight to Tokyo for the third of October",
                                     "my boss approved the leave", "ok"]
    wrapped = ("Twin is a personal memory daemon that learns from the files, mail and\n"
               "browser history of its owner and keeps what it learns as short memories\n"
               "about the owner. It recalls them by meaning and raises a quiet signal\n"
               "now and then.\nShort title line\n\nHi Anna,\nthe draft is ready.")
    assert split_sentences(wrapped) == [
        ("Twin is a personal memory daemon that learns from the files, mail and browser history of its owner and "
         "keeps what it learns as short memories about the owner."),
        "It recalls them by meaning and raises a quiet signal now and then.", "Short title line",
        "Hi Anna, the draft is ready."]


def test_markup_is_stripped():
    text = """Project Twin
============

# Overview

Twin is a *personal* memory daemon that **learns** from [your files](https://x.y/z).

```python
pip install twin
```

- It keeps memories as short sentences.
  > quoted continuation here
1. Numbered item with `code` inside.
- [x] Done task in a checklist.

| Setting | Default |
|---------|---------|
| tick    | 600     |

#+TITLE: Org notes
** TODO Call the dentist about the crown
"""
    assert split_sentences(text) == [
        "Project Twin", "Overview", "Twin is a personal memory daemon that learns from your files.",
        "It keeps memories as short sentences.", "quoted continuation here",
        "Numbered item with code inside.",
        "Done task in a checklist.", "Setting, Default", "tick, 600", "Org notes",
        "TODO Call the dentist about the crown"]


def test_tags_the_owner_types_are_kept_and_a_documents_markup_is_not():
    assert contents("I always forget that the <br> tag in HTML has no closing tag.") == [
        "Owner always forgets that the <br> tag in HTML has no closing tag."]
    assert contents("My XSS test string is <script>alert(1)</script> for the demo.") == [
        "Owner's XSS test string is <script>alert(1)</script> for the demo."]
    assert contents("<p>The lab moved the <b>freezer</b> to room 12 on Friday.</p>", document_title="lab.html") == [
        "lab.html: The lab moved the freezer to room 12 on Friday."]


def test_whitespace_is_collapsed():
    assert split_sentences("  Owner \t likes\u00a0 tea.\n\n\n  ") == ["Owner likes tea."]


# --- filtering -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", CASES["test_boilerplate_code_and_noise_are_dropped"])
def test_boilerplate_code_and_noise_are_dropped(line):
    assert extract(line) == []
    assert extract(line, document_title="notes.txt") == []


@pytest.mark.parametrize("question", CASES["test_questions_are_dropped"])
def test_questions_are_dropped(question):
    assert extract(question) == []


def test_headings_without_punctuation_are_dropped_but_body_is_kept():
    text = "# Getting started with the daemon\n\nThe daemon runs as a systemd user service."
    assert contents(text) == ["The daemon runs as a systemd user service."]


def test_exact_duplicates_are_dropped_within_a_call():
    text = "I love tea. i love tea! I LOVE TEA. Owner loves tea. I love green tea."
    assert contents(text) == ["Owner loves tea.", "Owner loves green tea."]


def test_length_bounds_from_seed_000():
    assert extract("Owner is ok") == []  # 11 characters
    assert contents("Owner is fine") == ["Owner is fine."]
    long = "Owner likes " + "very " * 90 + "long walks."
    assert len(long) > 400 and extract(long) == []
    for candidate in extract("Owner likes tea. " + "Owner enjoys " + "many " * 70 + "things."):
        assert 12 <= len(candidate.content) <= 400


# --- sentences holding a secret --------------------------------------------------------------------------------
# Fake secrets are assembled at runtime (as in test_sensitivity.py) so no token-shaped literal sits in the source.
IBAN_DE = "DE89" + "370400440532013000"
IBAN_GB = "GB29" + "NWBK60161331926819"
CARD = "4111" + "111111111111"
GITHUB_TOKEN = "gh" + "p_16C7e42F292c6912E7710c838347Ae178B4a"


@pytest.mark.parametrize(("said", "memory"), [
    (f"My IBAN is {IBAN_DE}", f"Owner's IBAN is {IBAN_DE}"),  # no period glued to the value
    (f"IBAN: {IBAN_GB}", f"IBAN: {IBAN_GB}"),
    (f"My card number is {CARD}", f"Owner's card number is {CARD}"),
    (f"GitHub token {GITHUB_TOKEN}", f"GitHub token {GITHUB_TOKEN}"),
    ("My 2FA backup codes are 8812-4471, 3390-1284, 5521-0093.",
     "Owner's 2FA backup codes are 8812-4471, 3390-1284, 5521-0093."),
])
def test_short_sentence_holding_a_secret_is_kept(said, memory):
    """Too few letters to look memorable, but the secret is what the owner wanted kept (capture marks it
    sensitive)."""
    assert contents(said) == [memory]
    assert infer_sensitivity(memory) == "sensitive"


@pytest.mark.parametrize(("said", "memory"), CASES["test_secret_is_stored_as_written"])
def test_secret_is_stored_as_written(said, memory):
    assert contents(said) == [memory]
    assert infer_sensitivity(memory) == "sensitive"


def test_secret_words_do_not_set_kind_or_tags():
    found = only("My password is 'I love coffee'")
    assert (found.kind, found.tags) == ("fact", ())


@pytest.mark.parametrize(("said", "memory"),
    CASES["test_statement_holding_a_secret_and_ending_in_a_question_mark_is_kept"])
def test_statement_holding_a_secret_and_ending_in_a_question_mark_is_kept(said, memory):
    """Only a start like a question makes it one; the "?" stays, as the ends of secret sentences do."""
    assert contents(said) == [memory]
    assert infer_sensitivity(memory) == "sensitive"


@pytest.mark.parametrize("question", CASES["test_question_holding_a_secret_is_dropped"])
def test_question_holding_a_secret_is_dropped(question):
    assert extract(question) == []


def test_documents_keep_secrets():
    assert contents(f"IBAN: {IBAN_GB}", document_title="bank.txt") == [f"bank.txt: IBAN: {IBAN_GB}"]


# --- kinds, importance, tags -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("said", "kind"), CASES["test_kind_rules"])
def test_kind_rules(said, kind):
    assert only(said).kind == kind


@pytest.mark.parametrize(("said", "importance"), CASES["test_importance_rules"])
def test_importance_rules(said, importance):
    assert only(said).importance == pytest.approx(importance)


def test_tags_are_few_lowercase_topics():
    assert only("My sister Ana lives in Porto.").tags == ("family", "home")
    assert only("I'm allergic to penicillin").tags == ("health",)
    assert only("The weather was grey over the valley").tags == ()
    for candidate in extract("My sister and my boss love coffee, hiking, dogs and travel abroad."):
        assert len(candidate.tags) <= 3
        assert all(tag == tag.lower() and tag.isalpha() for tag in candidate.tags)


# --- limits --------------------------------------------------------------------------------------------------------

def test_at_most_limit_candidates_in_text_order():
    text = " ".join(f"Owner visited museum number {n} in the old town." for n in range(30))
    found = extract(text)
    assert len(found) == MAX_PER_CALL == 12
    assert [c.content for c in found] == [f"Owner visited museum number {n} in the old town." for n in range(12)]
    assert len(extract(text, limit=3)) == 3
    assert extract(text, limit=0) == [] and extract(text, limit=-1) == []
    assert len(extract(text, limit=100)) == 30


# --- document mode -------------------------------------------------------------------------------------------------

def test_document_mode_prefixes_title_and_writes_the_owner_in_third_person():
    """A file's "I" is the owner (these were stored in the first person); "it" is what the text named before."""
    text = ("Twin is a personal memory daemon that runs on my workstation.\n\n"
            "I wrote it in Python over a long winter.\n\nShort line here ok.")
    found = extract(text, document_title="README.md")
    assert [c.content for c in found] == [
        "README.md: Twin is a personal memory daemon that runs on Owner's workstation.",
        "README.md: Owner wrote Twin in Python over a long winter.",
        "README.md: Short line here ok."]
    assert {c.kind for c in found} == {"document"}
    assert {c.importance for c in found} == {0.3}


def test_document_mode_prefers_informative_sentences_in_document_order():
    text = "Short note one here. Twin keeps every memory in a single SQLite database file. Tiny line two here. " \
           "The index is a sidecar that can be rebuilt from the stored vectors at any time."
    assert contents(text, document_title="design.md", limit=2) == [
        "design.md: Twin keeps every memory in a single SQLite database file.",
        "design.md: The index is a sidecar that can be rebuilt from the stored vectors at any time."]


def test_document_mode_title_and_length():
    title = "  my   notes\n.md :  "
    assert contents("The garden needs water every second day.", document_title=title) == [
        "my notes .md: The garden needs water every second day."]
    long_title = "x" * 500
    for candidate in extract("The garden needs water every second day.", document_title=long_title):
        assert len(candidate.content) <= 400
    near = "The garden " + "really " * 53 + "needs water."
    assert len(near) <= 400 and extract(near, document_title="a-rather-long-title.md") == []


# --- robustness ----------------------------------------------------------------------------------------------------

def _garbage(rng: random.Random) -> str:
    pools = ["abc DEF. ?!\n\t", "\x00\x01\x1b\x7f\ufeff\u200b\u202e", "😀🍣👍🏽‍❤️", "שלום עולם مرحبا", "。！？「」",
             "*#>-|=`~[]()", "\ud800\udfff", "\r\n\u2028\u2029", "0123456789", "e.g. i.e. Dr. etc. U.S. ..."]
    return "".join(rng.choice(rng.choice(pools)) for _ in range(rng.randrange(0, 400)))


def test_never_raises_on_garbage():
    rng = random.Random(20260314)
    inputs = ["", " ", "\n\n\n", ".", "?", "I", "my", "I and", "and I", "```", "```\nunclosed code", "|", "#",
              "\ud800 lone surrogate I love tea \udfff", "I love tea 🍣🍣🍣", "אני אוהב קפה שחור בבוקר.",
              "I" * 1000, "my " * 1000, "." * 5000, "[" * 5000, "**" * 5000, "a\n" * 5000]
    inputs += [_garbage(rng) for _ in range(300)]
    inputs += [bytes(rng.randrange(256) for _ in range(300)).decode("latin-1") for _ in range(50)]
    for text in inputs:
        split_sentences(text)
        for kwargs in ({}, {"document_title": "f.txt"}, {"document_title": "\ud800\n"}):
            for candidate in extract(text, **kwargs):
                assert candidate.kind in KINDS
                assert 12 <= len(candidate.content) <= 400
                assert 0.0 <= candidate.importance <= 1.0


def test_non_str_input():
    assert contents(b"I love green tea") == ["Owner loves green tea."]
    assert extract(None) == [] and split_sentences(12345) == []  # type: ignore[arg-type]


def test_candidate_validates():
    with pytest.raises(ValueError, match="unknown kind"):
        Candidate("goal", "Owner wants a dog someday.", 0.4, ())
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        Candidate("fact", "Owner wants a dog someday.", 1.5, ())


MEGABYTE_INPUTS = {  # each built at `scale` times a quarter megabyte
    "repeated prose": lambda scale: "The harbour was quiet and the boats were grey. " * (5500 * scale),
    "distinct sentences": lambda scale: "".join(f"Owner met colleague number {n} at the old harbour today. "
                                                for n in range(4500 * scale)),
    "tiny lines": lambda scale: "a\n" * (125000 * scale),
    "one run of dots": lambda scale: "." * (250000 * scale) + "x",
    "unclosed markup": lambda scale: "[" * (125000 * scale) + "**" * (62500 * scale),
}


def _cpu_s(text: str) -> float:
    start = time.process_time()
    extract(text, limit=10**6)
    extract(text, document_title="big.txt", limit=10**6)
    return time.process_time() - start


@pytest.mark.parametrize("build", MEGABYTE_INPUTS.values(), ids=MEGABYTE_INPUTS.keys())
@pytest.mark.slow
def test_a_megabyte_costs_four_quarter_megabytes(build):
    """Extraction stays linear on hostile shapes (a long run of one character, a million tiny lines): a megabyte
    costs about four times a quarter megabyte (a quadratic step would cost sixteen). A ratio of the same machine's
    times, not a speed target (those live in bench/)."""
    quarter = _cpu_s(build(1))
    whole = _cpu_s(build(4))
    assert whole < 8 * max(quarter, 0.05), (quarter, whole)
