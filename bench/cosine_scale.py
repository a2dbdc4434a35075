"""Each embedding model's cosine scale, measured on invented pairs: where an off-topic (question, memory) pair and a
paraphrase pair (the memory answers the question in other words) lie for the model, the two anchors of
`twin.vectors.cosine_scale.CosineScale`. The figures printed are what `COSINE_SCALES` holds.

    .venv/bin/python bench/cosine_scale.py                      # all-MiniLM and multilingual-e5-small
    .venv/bin/python bench/cosine_scale.py --models local       # one model

The pairs are ours (written for this bench, none from an eval set): English questions, two thirds of the answers in
English and a third in German, French, Spanish or Portuguese, as an owner's memories are. A question is embedded as
recall embeds a query (`embed_queries`), a memory as capture embeds one (`embed`). Off-topic pairs: each question
with the English answers of the other pairs (all about other things). The anchors are the medians of the off-topic
and of the English paraphrase pairs (`ENGLISH`).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from _common import table, write_json

NAME = "cosine_scale"

PAIRS = (
    ("where does my brother work?", "Owner's brother Tomasz works as a mechanic at a garage in Gdańsk."),
    ("what do I usually eat for breakfast?", "Owner has porridge with blueberries most mornings."),
    ("when is my dentist appointment?", "Owner sees the dentist on 14 March at half past nine."),
    ("which bike do I ride?", "Owner rides a second-hand blue steel road bicycle to the office."),
    ("what is my cat called?", "Owner's tabby cat is named Pepper."),
    ("how do I get to work?", "Owner commutes on the U6 underground line, twenty minutes door to door."),
    ("what instrument am I learning?", "Owner takes cello lessons every Thursday evening."),
    ("who cuts my hair?", "Owner's barber is Farid at a small shop near the canal."),
    ("what did I think of the new office?", "Owner found the new office bright but far too loud."),
    ("which coffee do I drink?", "Owner prefers a flat white with oat milk."),
    ("what allergy do I have?", "Owner is allergic to hazelnuts and carries antihistamines."),
    ("where did I go on holiday last summer?", "Owner spent two weeks walking on the coast of Crete in July."),
    ("what is my favourite film?", "Owners Lieblingsfilm ist Lola rennt; Owner hat ihn zehnmal gesehen."),
    ("what sport do I play on weekends?", "Owner spielt am Wochenende Volleyball im Stadtpark."),
    ("where does my mother live?", "La mère d'Owner habite à Lyon, près de la gare Part-Dieu."),
    ("what do I cook when friends visit?", "Owner prépare souvent un curry de lentilles pour les amis."),
    ("which language am I studying?", "Owner estudia japonés con una aplicación cada noche."),
    ("what car does my sister drive?", "La hermana de Owner conduce un Fiat Panda rojo."),
    ("what time do I go to bed?", "Owner costuma deitar-se por volta da meia-noite."),
    ("what is my job?", "Owner trabalha como enfermeira num hospital de Lisboa."),
    ("how much do I pay for the gym?", "Owner pays 34 euros a month for the climbing gym."),
    ("what board game do I like?", "Owner enjoys playing Carcassonne with the neighbours."),
    ("who is my best friend?", "Owner's closest friend since school is Marta."),
    ("what plants do I keep on the balcony?", "Owner grows basil, mint and cherry tomatoes on the balcony."),
)
"""`(question, memory that answers it)`: 16 answers in English, 8 in German, French, Spanish and Portuguese."""


ENGLISH = frozenset(range(12)) | frozenset(range(20, 24))
"""The pairs whose answer is in English: the anchors are measured on them (a model that reads only English, as
all-MiniLM, would otherwise have its paraphrase anchor pulled down by pairs it cannot read); the others are
reported beside them."""


def cosines(embedder) -> dict[str, list[float]]:
    """`{"paraphrase": …, "other languages": …, "off-topic": …}` cosines of `PAIRS` under `embedder` (opened):
    each pair's own question and answer (English answers, then the others), and every question with every other
    pair's English answer."""
    questions = embedder.embed_queries([q for q, _ in PAIRS])
    memories = embedder.embed([m for _, m in PAIRS])
    sims = questions @ memories.T
    n = len(PAIRS)
    return {"paraphrase": [float(sims[i, i]) for i in sorted(ENGLISH)],
            "other languages": [float(sims[i, i]) for i in range(n) if i not in ENGLISH],
            "off-topic": [float(sims[i, j]) for i in range(n) for j in sorted(ENGLISH) if i != j]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["local", "multilingual"], choices=["local", "multilingual"])
    args = parser.parse_args(argv)
    from twin.vectors.cosine_scale import scale_of
    from twin.vectors.embedder import make_embedder

    rows, figures = [], {}
    for backend in args.models:
        embedder = make_embedder(backend)
        embedder.open()
        found = cosines(embedder)
        med = {kind: statistics.median(values) for kind, values in found.items()}
        shipped = scale_of(embedder.model_id)
        figures[embedder.model_id] = {**{f"{kind} median": m for kind, m in med.items()},
                                      "shipped": [shipped.unrelated, shipped.paraphrase]}
        rows.append([embedder.model_id, med["off-topic"], med["paraphrase"], med["other languages"],
                     f"{shipped.unrelated:.3f} / {shipped.paraphrase:.3f}"])
    print(table(["model", "off-topic median", "paraphrase median (English)", "paraphrase median (other languages)",
                 "shipped anchors"], rows, digits=3, title=f"Cosine scale ({len(PAIRS)} invented pairs)"))
    print(f"\nfigures written to {write_json(NAME, figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
