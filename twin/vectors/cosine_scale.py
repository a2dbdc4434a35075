"""One cosine scale for every embedding model: recall's cosine cuts (the touch bar, the slot and event gates, the
verbatim cosine, `min_relevance`, the vector half of the fused score) were measured on all-MiniLM, whose unrelated
pairs lie near 0.1; multilingual-e5-small's lie near 0.8. A model's cosine is mapped onto all-MiniLM's by the
line through two anchors measured for each model on invented pairs (bench/cosine_scale.py): the median cosine of
an off-topic (question, memory) pair goes to all-MiniLM's, the median of a paraphrase pair (the memory answers the
question in other words) to all-MiniLM's. all-MiniLM itself and a model with no anchors (a remote one) keep their
cosines as they are. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REFERENCE_MODEL = "all-MiniLM-L6-v2-int8"
"""The model whose scale the cosine cuts were measured on (`twin.vectors.embedder.LocalEmbedder.model_id`)."""


@dataclass(frozen=True)
class CosineScale:
    """A model's two anchors: the median cosine of `unrelated` (off-topic) and of `paraphrase` pairs, both -1..1,
    `unrelated` < `paraphrase`."""

    unrelated: float
    paraphrase: float


COSINE_SCALES = {
    REFERENCE_MODEL: CosineScale(0.057, 0.422),
    "multilingual-e5-small-q4": CosineScale(0.766, 0.842),
}
"""Anchors by model id, measured with bench/cosine_scale.py (the medians of 16 invented English paraphrase pairs and of
368 off-topic pairs)."""


def scale_of(model_id: str) -> CosineScale:
    """The anchors of `model_id` (the reference's for a model not measured: its cosines are left as they are)."""
    return COSINE_SCALES.get(model_id, COSINE_SCALES[REFERENCE_MODEL])


class CommonCosine:
    """Maps cosines of `model_id` onto the reference model's scale and back (`common`, `raw`): common = slope · raw
    + offset, the line through the model's anchors and the reference's; the identity (`identity` True, callers may
    skip the call) for the reference and for a model not in `COSINE_SCALES`."""

    def __init__(self, model_id: str):
        own, ref = scale_of(model_id), COSINE_SCALES[REFERENCE_MODEL]
        self.model_id = model_id
        self.identity = own == ref
        self.slope = (ref.paraphrase - ref.unrelated) / (own.paraphrase - own.unrelated)
        self.offset = ref.unrelated - self.slope * own.unrelated

    def common(self, cosine: float) -> float:
        """`cosine` of this model on the reference scale (not clipped: callers clip to 0..1 as they did)."""
        return cosine if self.identity else self.slope * cosine + self.offset

    def common_array(self, cosines: np.ndarray) -> np.ndarray:
        """`common` over an array (float32 in, float32 out)."""
        return cosines if self.identity else (cosines * self.slope + self.offset).astype(np.float32)

    def raw(self, cosine: float) -> float:
        """The cosine of this model that `common` maps to `cosine` (for a cut on stored raw cosines, as edges)."""
        return cosine if self.identity else (cosine - self.offset) / self.slope
