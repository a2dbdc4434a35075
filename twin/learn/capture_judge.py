"""The model's reading of how new memories relate to the ones the twin already holds (the issue's "use the model
when configured": similarity alone cannot tell a contradiction from a paraphrase, LIBRARY_NOTES §8, and the
offline rules of `twin.text.capture_rules` catch only updates worded like the fact they replace).

One structured call per `learn()` compares every new candidate with its best keyword matches among the active
memories (`COMPARED_PER_MEMORY`) and names each pair `same`, `refines`, `contradicts` or `unrelated`. Memories are
quoted as data (DESIGN.md invariant 8); secrets are redacted by the provider before the call. The answer is
untrusted: pairs it invents (ids it was not shown) are dropped, unknown relation words are `unrelated`. Any
failure raises `ProviderError`, and capture uses its offline rules for that call.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, field_validator

from twin.llm.provider import BULK_SHARE, DATA_RULE, ModelProvider, dropping_invalid, quote_data

COMPARED_PER_MEMORY = 8
"""Active memories shown to the model per new memory: its best keyword matches (bm25), ours."""
RELATIONS = ("same", "refines", "contradicts", "unrelated")

SYSTEM_PROMPT = f"""Task: comparison.
You keep the memory of one person, called "Owner". You are shown NEW statements about Owner and, for each, some
EXISTING statements the memory already holds. For every pair, say how the new statement relates to the existing
one:
- "same": it says the same thing in other words;
- "refines": the same fact, and the new one adds detail;
- "contradicts": the same subject and attribute with a different value, so the new statement replaces the
  existing one (moved to another city, a new employer or manager, a changed diet, a new phone, a break-up);
- "unrelated": anything else, including a different person, a different attribute, a past event or a plan.
When unsure, answer "unrelated": a wrong "contradicts" hides a true memory.
{DATA_RULE}
Give a short reason for every pair that is not "unrelated"."""


class Judgement(BaseModel):
    """One pair as the model answers it: new statement `new` (its number), existing memory `existing` (its id)."""

    model_config = ConfigDict(extra="ignore")
    new: int
    existing: int
    relation: str = "unrelated"
    reason: str = ""

    @field_validator("relation", mode="before")
    @classmethod
    def _relation(cls, value: object) -> str:
        word = str(value or "").strip().lower()
        return word if word in RELATIONS else "unrelated"

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: object) -> str:
        return " ".join(str(value or "").split())[:200]


class ComparisonAnswer(BaseModel):
    """The whole answer: `{pairs: [...]}` (items that do not parse are dropped one by one)."""

    model_config = ConfigDict(extra="ignore")
    pairs: Annotated[list[Judgement], dropping_invalid(Judgement)]


def judge(provider: ModelProvider, batch: list[tuple[str, list[tuple[int, str]]]]) -> list[dict[int, tuple[str, str]]]:
    """For each `(new content, [(existing id, existing content), ...])` in `batch`, `{existing id: (relation,
    reason)}` for the pairs the model did not call unrelated (same order as `batch`; an entry with no existing
    memories is `{}` and costs nothing). Pairs the model names but was not shown are ignored; pairs it leaves out
    are unrelated. One call of the cheap tier (bounded to one attempt, within the bulk share of the daily budget).
    Raises `ProviderError` (including `BadAnswer`, `BudgetExhausted`) when the model cannot answer."""
    shown = [{mid for mid, _ in existing} for _, existing in batch]
    out: list[dict[int, tuple[str, str]]] = [{} for _ in batch]
    if not any(shown):
        return out
    blocks = []
    for n, (content, existing) in enumerate(batch, start=1):
        if existing:
            lines = [f"NEW {n}: {content}", *(f"  EXISTING #{mid}: {text}" for mid, text in existing)]
            blocks.append("\n".join(lines))
    user = ("Compare each NEW statement with the EXISTING statements listed under it. Answer with pairs "
            '{"new": <NEW number>, "existing": <EXISTING id>, "relation": ..., "reason": ...}.\n'
            + quote_data("MEMORIES", "\n\n".join(blocks)))
    answer = provider.chat_json(SYSTEM_PROMPT, user, ComparisonAnswer, purpose="comparison", attempts=1,
                                budget_share=BULK_SHARE)
    for pair in answer.pairs:
        index = pair.new - 1
        if 0 <= index < len(batch) and pair.existing in shown[index] and pair.relation != "unrelated":
            out[index][pair.existing] = (pair.relation, pair.reason or pair.relation)
    return out
