"""Recall's tunables, in one place (the settings' defaults and `Recall`'s default both read them)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


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

RECALL_WEIGHTS = Weights(keyword=0.5, importance=0.10, recency=0.03, half_life_days=45.0)
"""The shipped weights. Recency 0.03 (0.05 before): measured on both dev sets in one run (`bench/eval_recall.py
--grid`, then `--ablate`'s per-conversation check), personal R@5 / R@10 0.808 / 0.847 -> 0.808 / 0.850 and LoCoMo
0.642 / 0.716 -> 0.648 / 0.723, higher on each of its five conversations; no recency at all costs the personal set
0.026 R@5 (its current facts), 0.12 costs LoCoMo 0.067 (questions about an old session)."""


@dataclass(frozen=True)
class RecallConfig:
    """Everything recall's ranking can be tuned by (the `recall_*` settings; `bench/eval_recall.py --grid`).

    keyword, importance, recency, half_life_days, candidates: seed 000's blend (`Weights`) and the candidates taken
    from each of FTS5 and the vector index. keyword_norm / vector_norm: how each signal is brought to 0..1 over
    the query's candidates before the convex combination: "best" (bm25 / the best candidate's, keyword only),
    "raw" (cosine clipped at 0, vector only), "minmax", "zscore" (the normal CDF of the z-score), "rank"
    ((k + 1) / (k + rank), reciprocal rank fusion with k = `rrf_k`). share: the keyword score is multiplied by
    the IDF-weighted share of the query's terms the memory holds. complete: a keyword candidate outside the vector
    top-k gets its real cosine (from its stored vector) and a vector candidate outside the keyword top-k its real
    bm25. time_filter: "strict" keeps only a strict window's memories, "soft" multiplies their score by
    `strict_lift` and keeps the rest. keep_dates: a date typed in the query keeps its keyword credit.
    newer_first, first_person, event_anchors: the rules of the same names (twin.recall.hybrid). turn_share,
    turn_gap_s: a result's score gains `turn_share` × the score of the best of its two neighbours in the same
    conversation (the memory of the same source just before or after it, at most `turn_gap_s` seconds apart) when
    that neighbour is a result too: a question's answer is often the next turn (`Recall._with_turns`). inherit: the
    current memory that superseded a candidate, when no candidate itself, takes that candidate's keyword and
    vector scores (`Recall._inherited`)."""

    keyword: float = RECALL_WEIGHTS.keyword
    importance: float = RECALL_WEIGHTS.importance
    recency: float = RECALL_WEIGHTS.recency
    half_life_days: float = RECALL_WEIGHTS.half_life_days
    candidates: int = 50
    keyword_norm: str = "best"
    vector_norm: str = "raw"
    rrf_k: float = 60.0
    share: bool = True
    complete: bool = True
    time_filter: str = "soft"
    strict_lift: float = 3.0
    keep_dates: bool = True
    newer_first: bool = False
    slots: bool = True
    first_person: bool = False
    event_anchors: bool = True
    turn_share: float = 0.15
    turn_gap_s: float = 600.0
    inherit: bool = True

    @property
    def weights(self) -> Weights:
        return Weights(self.keyword, self.importance, self.recency, self.half_life_days)

    @classmethod
    def of(cls, values: dict) -> RecallConfig:
        """A config from `values` (unknown keys ignored), the rest at their defaults."""
        names = {f.name for f in fields(cls)}
        return replace(cls(), **{k: v for k, v in values.items() if k in names})


RECALL_CONFIG = RecallConfig()
"""The shipped ranking."""
