"""The corpus is the contract (tests/secret_corpus.py): every secret in it is found whole and redacted, no
negative is flagged, and the offline extractor keeps each secret whole in one sensitive candidate, never a
piece of it in an ordinary one (an OpenSSH key once became five ordinary memories of raw key lines)."""

from __future__ import annotations

import pytest
from secret_corpus import NEGATIVES, SECRETS, SecretCase

from twin.text.extractor import extract
from twin.text.sensitivity import REDACTED, find_secrets, infer_sensitivity, redact


def covered(text: str, value: str) -> bool:
    """Whether every character of every occurrence of `value` in `text` lies inside some finding."""
    inside = set()
    for secret in find_secrets(text):
        inside.update(range(secret.start, secret.end))
    start = text.find(value)
    while start >= 0:
        if not inside.issuperset(range(start, start + len(value))):
            return False
        start = text.find(value, start + 1)
    return True


def test_corpus_size_and_spread():
    assert len(SECRETS) >= 120 and len(NEGATIVES) >= 150
    assert len({c.fmt for c in SECRETS}) >= 12 and len({c for c, _ in NEGATIVES}) >= 18


@pytest.mark.parametrize("case", SECRETS, ids=[f"{c.fmt}-{i:03d}" for i, c in enumerate(SECRETS)])
def test_every_corpus_secret_is_found_whole_and_redacted(case: SecretCase):
    for value in case.values:
        assert covered(case.text, value), f"{case.fmt}: {value!r} not covered in {case.text!r}"
    redacted = redact(case.text)
    assert REDACTED in redacted and all(value not in redacted for value in case.values)
    assert redact(redacted) == redacted


@pytest.mark.parametrize(("kind", "text"), NEGATIVES, ids=[f"{k}-{i:03d}" for i, (k, _) in enumerate(NEGATIVES)])
def test_no_negative_is_flagged(kind: str, text: str):
    assert find_secrets(text) == [], f"{kind}: {text!r} -> {redact(text)!r}"


def _pieces(value: str) -> list[str]:
    """The parts of a secret a sentence splitter could cut it into: its lines and its words of 8+ characters."""
    return [p for p in {*value.splitlines(), *value.split()} if len(p.strip()) >= 8]


@pytest.mark.parametrize("case", SECRETS, ids=[f"{c.fmt}-{i:03d}" for i, c in enumerate(SECRETS)])
def test_the_offline_extractor_keeps_each_secret_whole_in_a_sensitive_candidate(case: SecretCase):
    candidates = extract(case.text, limit=12)
    for value in case.values:
        holding = [c for c in candidates if value in c.content]
        assert holding, f"{case.fmt}: no candidate holds {value!r}: {[c.content for c in candidates]}"
        assert all(c.sensitive and infer_sensitivity(c.content) == "sensitive" for c in holding)
    for candidate in candidates:
        if not candidate.sensitive:
            assert not any(piece in candidate.content for v in case.values for piece in _pieces(v)), candidate
