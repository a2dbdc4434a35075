"""Capture rules (twin/text/capture_rules.py): the worthiness gate, token_jaccard, relate() on hand-made pairs of each
kind, and relate() measured against the eval set's ground truth (`supersedes`, `dup_of`). Pure functions, no
fixtures; the eval test reads shared/eval/memories.jsonl and is skipped when it is absent."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from case_tables import case_tables

from twin.text.capture_rules import DUPLICATE_JACCARD, Relation, relate, token_jaccard, tokens, unworthy

CASES = case_tables("capture_rules")
"""The case tables of this module (tests/data/capture_rules_cases.toml)."""

SAMPLE = 300  # pairs per negative sample
SEED = 20261120  # fixed: the eval set's last day


# --- the worthiness gate ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", CASES["test_filler_is_unworthy"])
def test_filler_is_unworthy(text):
    assert unworthy(text).startswith("filler: ")


def test_any_run_of_filler_is_unworthy_in_linear_time():
    assert unworthy("ok ok ok ok ok ok") == "filler: ok ok ok ok ok ok"
    assert unworthy("bye " * 2000 + "tomorrow I fly to Porto") is None  # backtracking here would never finish


def test_filler_reason_names_the_words():
    assert unworthy("Thanks!!") == "filler: thanks"
    assert unworthy("👍") == "filler: 👍"
    assert unworthy("") == unworthy("   ") == "empty"


def test_length_floor_is_12_characters_after_trimming():
    assert unworthy("Owner runs.") == "shorter than 12 characters"  # 11
    assert unworthy("Owner swims.") is None  # 12
    assert unworthy("   Owner runs.   ") == "shorter than 12 characters"
    assert unworthy("hello there") == "shorter than 12 characters"


@pytest.mark.parametrize("text", CASES["test_real_content_passes"])
def test_real_content_passes(text):
    assert unworthy(text) is None


# --- token_jaccard ------------------------------------------------------------------------------------------------

def test_token_jaccard_keeps_a_changed_city_apart():
    """The dream cycle merges at >= 0.5 (seed 003); a moved city must stay below."""
    assert token_jaccard("Owner lives in Lisbon.", "Owner lives in Berlin.") == pytest.approx(1 / 3)
    assert token_jaccard("lives in Lisbon", "lives in Berlin") < 0.5


def test_token_jaccard_edges():
    assert token_jaccard("Owner LIVES in Lisbon!", "owner lives in lisbon") == 1.0
    assert token_jaccard("Owner pays 1,420 euros.", "Owner pays 1420 euro") == 1.0
    assert token_jaccard("", "") == 0.0
    assert token_jaccard("the and of", "Owner") == 0.0
    assert tokens("Owner住在柏林。") == {"住在", "在柏", "柏林"}  # CJK runs become bigrams, "Owner" is a stopword


# --- relate: contradictions ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("new", "old"), CASES["test_contradictions"])
def test_contradictions(new, old):
    got = relate(new, old)
    assert got.kind == "contradiction", got


def test_contradiction_reason_names_subject_relation_and_objects():
    got = relate("Owner lives in Berlin.", "Owner lives in Lisbon.")
    reason = "same subject 'Owner lives in', different object: 'in lisbon' → 'in berlin'"
    assert got == Relation("contradiction", reason)
    assert "vegetarian' → 'vegan'" in relate("Owner is vegan.", "Owner is vegetarian.").reason


# --- relate: values that add up, paraphrases, unrelated pairs -----------------------------------------------------

@pytest.mark.parametrize(("new", "old"), CASES["test_additive_relations_do_not_contradict"])
def test_additive_relations_do_not_contradict(new, old):
    assert relate(new, old).kind == "unrelated"


@pytest.mark.parametrize(("new", "old"), CASES["test_paraphrases_and_refinements_are_duplicates"])
def test_paraphrases_and_refinements_are_duplicates(new, old):
    got = relate(new, old)
    assert got.kind == "duplicate", got


@pytest.mark.parametrize(("new", "old"), [
    ("Owner plays chess on Lichess.", "Owner lives in Lisbon."),
    ("Owner's brother Rui lives in Porto.", "Owner's sister Mira lives in Porto."),  # two people
    ("Owner's sister Mira lives in Copenhagen.", "Owner lives in Porto."),
    ("Owner's phone number ends in 412.", "Owner uses a Google Pixel 7."),
    ("Owner's password manager is Bitwarden.", "Owner's manager is Anke Vogt."),
    ("Owner and Lena signed a lease for a flat at Kollwitzstraße 41 on 1 October 2026.",  # two events
     "Owner signed the lease for a flat at Weserstraße 112 on 1 September 2025."),
    ("Owner's Home Assistant long-lived access token is abc.", "Owner lives at Weserstraße 112."),
    ("Owner opened a DKB account for the Kestrel salary.", "Owner's gross salary is 92,000 euros a year."),
])
def test_unrelated_pairs(new, old):
    got = relate(new, old)
    assert got.kind == "unrelated", got


@pytest.mark.parametrize(("new", "old", "kind"), CASES["test_other_languages_fall_back_to_word_overlap"])
def test_other_languages_fall_back_to_word_overlap(new, old, kind):
    got = relate(new, old)
    assert got.kind == kind, got


@pytest.mark.parametrize("text", ["", "👍", "Owner", "Owner's", "'s", "Owner's sister", "x" * 5000, "Owner " * 300,
                                  "Owner's new is", "from to with", "Owner prefers over to than"])
def test_relate_never_raises(text):
    for new, old in ((text, "Owner lives in Lisbon."), ("Owner lives in Lisbon.", text), (text, text)):
        got = relate(new, old)
        assert got.kind in ("duplicate", "contradiction", "unrelated") and got.reason


# --- the eval set -------------------------------------------------------------------------------------------------

def _clusters(memories: dict[str, dict]) -> dict[str, str]:
    """Memory id -> a root id shared by every memory linked to it through `dup_of` / `supersedes` chains."""
    parent = {i: i for i in memories}

    def find(i: str) -> str:
        while parent[i] != i:
            i = parent[i]
        return i

    for m in memories.values():
        for link in (m["dup_of"], m["supersedes"]):
            if link:
                parent[find(m["id"])] = find(link)
    return {i: find(i) for i in memories}


def _sample(pairs: list[tuple[dict, dict]], rng: random.Random) -> list[tuple[dict, dict]]:
    return rng.sample(pairs, min(SAMPLE, len(pairs)))


@pytest.mark.eval
def test_eval_set_recall_and_false_calls(eval_dir: Path):
    """Ground truth: every `supersedes` pair should be a contradiction and every `dup_of` pair a duplicate.
    Negatives: pairs of memories about Owner that no `dup_of`/`supersedes` chain links, new = the later one;
    300 at random, and 300 among the pairs sharing a tag (same topic: harder). Prints a table (pytest -s)."""
    path = eval_dir / "memories.jsonl"
    memories = {m["id"]: m for m in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    cluster = _clusters(memories)
    ordered = sorted((m for m in memories.values() if m["content"].startswith("Owner")), key=lambda m: m["created_at"])
    unlinked = [(old, new) for i, old in enumerate(ordered) for new in ordered[i + 1:]
                if cluster[old["id"]] != cluster[new["id"]]]
    rng = random.Random(SEED)
    negatives = {"random pairs": _sample(unlinked, rng),
                 "same-tag pairs": _sample([(o, n) for o, n in unlinked if set(o["tags"]) & set(n["tags"])], rng)}

    def kinds(pairs):
        return [relate(new["content"], old["content"]).kind for old, new in pairs]

    sup = kinds([(memories[m["supersedes"]], m) for m in memories.values() if m["supersedes"]])
    dup = kinds([(memories[m["dup_of"]], m) for m in memories.values() if m["dup_of"]])
    rows = [("supersedes -> contradiction (recall)", sup.count("contradiction"), len(sup)),
            ("dup_of -> duplicate (recall)", dup.count("duplicate"), len(dup)),
            ("dup_of -> contradiction (wrong)", dup.count("contradiction"), len(dup))]
    for name, pairs in negatives.items():
        got = kinds(pairs)
        rows += [(f"{name}: false contradiction", got.count("contradiction"), len(got)),
                 (f"{name}: false duplicate", got.count("duplicate"), len(got))]
    print(f"\n{'capture rules on eval/memories.jsonl':<45} {'n':>5} {'of':>5} {'share':>7}")
    for name, n, total in rows:
        print(f"{name:<45} {n:>5} {total:>5} {n / total:>7.1%}")
    share = {name: n / total for name, n, total in rows}
    assert share["supersedes -> contradiction (recall)"] >= 0.8
    assert share["dup_of -> duplicate (recall)"] >= 0.6
    assert share["dup_of -> contradiction (wrong)"] <= 0.05
    for name in negatives:
        assert share[f"{name}: false contradiction"] <= 0.05
        assert share[f"{name}: false duplicate"] <= 0.03
    assert DUPLICATE_JACCARD < 0.5  # paraphrases score far below the dream cycle's merge bar (see its docstring)
