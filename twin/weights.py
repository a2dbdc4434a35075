"""Recall's blend weights, in one place (the settings' defaults and `Recall`'s default both read them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """score = (1 − importance − recency) · (keyword · kw + (1 − keyword) · vector) + importance · imp
    + recency · 0.5 ^ (age_days / half_life_days); all weights 0..1, the half-life in days (seed 000)."""

    keyword: float
    importance: float
    recency: float
    half_life_days: float


SEED_WEIGHTS = Weights(keyword=0.5, importance=0.18, recency=0.12, half_life_days=45.0)
"""Seed 000's weights: 50/50 keyword/vector, importance 18 %, recency 12 % with a 45-day half-life."""

RECALL_WEIGHTS = Weights(keyword=0.3, importance=0.10, recency=0.05, half_life_days=45.0)
"""The shipped weights: the most robust point (best mean of R@5 and MRR over its grid neighbours) of
`bench/eval_recall.py --grid` on the shared eval set's dev split: R@5 0.770 and MRR 0.729 against seed
000's 0.724 and 0.681 (DESIGN.md: "the numbers that ship are the ones that score best on eval/")."""
