"""A synthetic but realistic memory corpus for the performance benches, and its on-disk cache.

Memories are varied third-person sentences ("Owner had dinner with their sister Marta at ...") made from
~40 templates x a few thousand vocabulary words, with kinds, importances, sources and creation times spread
over three years, so FTS5 sees a natural, skewed term distribution and the vectors form real clusters.
Queries are first-person questions in the owner's voice ("where does my colleague Jonas work?").

`ensure_store(n)` builds (once) a twin data dir under `bench/out/cache/` with the store, every vector
embedded by the real model and the index built by `IndexWriter`, and returns its path; later runs reuse it.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from _common import CACHE_DIR, load_note

GENERATOR_VERSION = 1
"""Bump when the generator changes: the cache key includes it."""
BEING = "owner"
SEED = 20261130

FIRST = ("Marta", "Jonas", "Aiko", "Lena", "Tomás", "Inês", "Yusuf", "Priya", "Chen", "Sofia", "Mateo", "Hannah",
         "Lukas", "Amara", "Kenji", "Elif", "Noah", "Zoë", "Rafael", "Clara", "Dmitri", "Ana", "Bruno", "Leila",
         "Omar", "Freya", "Tariq", "Greta", "Paulo", "Mei", "Julia", "Felix", "Nadia", "Sven", "Beatriz", "Kofi",
         "Ingrid", "Diego", "Yara", "Hiro", "Maya", "Anton", "Lucía", "Ravi", "Elsa", "Marek", "Chiara", "Idris",
         "Helena", "Pedro", "Astrid", "Kai", "Rosa", "Emil", "Sara", "Viktor", "Noor", "Theo", "Alma", "Rui",
         "Fatima", "Ole", "Carmen", "Jakob", "Ayla", "Nils", "Lotte", "Gabriel", "Imke")
SURNAMES = ("Weber", "Silva", "Tanaka", "Okafor", "Novak", "Schmidt", "Costa", "Müller", "Rossi", "Kowalski",
            "Haddad", "Nguyen", "Fischer", "Lindqvist", "Moreau", "Petrov", "Jensen", "Alves", "Becker", "Sato",
            "Oliveira", "Hoffmann", "Brandt", "Keller", "Ferreira", "Yilmaz", "Dubois", "Wagner", "Kaur", "Ibrahim",
            "Andersen", "Richter", "Lopes", "Vogel", "Bauer", "Santos", "Zimmermann", "Ito", "Nowak", "Hansen")
RELATIONS = ("sister", "brother", "mother", "father", "cousin", "aunt", "uncle", "colleague", "manager", "friend",
             "neighbour", "flatmate", "partner", "grandmother", "niece", "nephew", "landlord", "dentist", "teammate",
             "mentor")
CITIES = ("Berlin", "Lisbon", "Porto", "Hamburg", "Munich", "Vienna", "Prague", "Amsterdam", "Copenhagen", "Madrid",
          "Barcelona", "Seville", "Paris", "Lyon", "Milan", "Rome", "Naples", "Athens", "Istanbul", "Kraków",
          "Warsaw", "Budapest", "Zurich", "Geneva", "Brussels", "Antwerp", "Dublin", "Edinburgh", "London",
          "Manchester", "Oslo", "Stockholm", "Helsinki", "Tallinn", "Riga", "Vilnius", "Ljubljana", "Zagreb", "Split",
          "Valencia", "Coimbra", "Faro", "Bordeaux", "Marseille", "Leipzig", "Dresden", "Cologne", "Frankfurt",
          "Stuttgart", "Tokyo", "Kyoto", "Osaka", "Seoul", "Toronto", "Montreal", "Boston", "Chicago", "Lima",
          "Bogotá", "Nairobi", "Marrakesh", "Cairo", "Tbilisi", "Yerevan", "Reykjavík")
DISTRICTS = ("Kreuzberg", "Neukölln", "Friedrichshain", "Prenzlauer Berg", "Mitte", "Wedding", "Moabit",
             "Schöneberg", "Pankow", "Alfama", "Bairro Alto", "Graça", "Belém", "Chiado", "the Marais", "Montmartre",
             "Trastevere", "Gràcia", "El Born", "the Jordaan", "Södermalm")
VENUES = ("ramen bar", "Portuguese tavern", "vegan bistro", "tapas bar", "Lebanese grill", "pizzeria",
          "sushi counter", "beer garden", "wine bar", "Vietnamese canteen", "bakery café", "Georgian restaurant",
          "steakhouse", "dumpling shop", "seafood place", "Ethiopian restaurant", "taqueria", "brunch café")
DRINKS = ("espresso", "flat white", "green tea", "oolong", "oat latte", "filter coffee", "matcha", "chai",
          "rooibos", "hot chocolate", "kombucha", "sparkling water", "Riesling", "vinho verde", "IPA", "Club-Mate")
FOODS = ("sushi", "pastel de nata", "ramen", "falafel", "bacalhau", "kimchi", "goat cheese", "mushroom risotto",
         "lentil soup", "shakshuka", "pho", "currywurst", "blue cheese", "coriander", "olives", "anchovies",
         "dark chocolate", "sourdough bread", "tofu", "pickled herring", "spicy tuna rolls", "fried plantain")
HOBBIES = ("bouldering", "sourdough baking", "trail running", "film photography", "playing the cello",
           "birdwatching", "chess", "open-water swimming", "woodworking", "salsa dancing", "pottery",
           "cycling", "urban sketching", "learning Japanese", "learning German", "board games", "yoga",
           "fly fishing", "kayaking", "growing tomatoes", "knitting", "home brewing", "tennis", "padel")
OBJECTS = ("road bike", "mechanical keyboard", "espresso machine", "winter coat", "laptop", "hiking boots",
           "e-reader", "standing desk", "rain jacket", "camera lens", "pair of headphones", "coffee grinder",
           "backpack", "sofa", "guitar", "smartwatch", "tent", "monitor", "cast-iron pan", "wool sweater")
ADJECTIVES = ("second-hand", "blue", "refurbished", "cheap", "expensive", "vintage", "lightweight", "black",
              "red", "waterproof", "bright yellow", "secondhand Japanese", "brand-new", "green")
SHOPS = ("a flea market", "a small shop in Neukölln", "an online marketplace", "a department store",
         "a repair café", "a friend of Jonas", "the outlet in Wustermark", "a shop near Alexanderplatz",
         "a Kleinanzeigen seller", "the hardware store on Sonnenallee")
COMPANIES = ("Lumora", "Kestrel Systems", "Northwind Labs", "Fernhill Analytics", "Quayside Bank", "Tessel",
             "Brightpath Health", "Orbit Freight", "Halden Energy", "Mosaic Games", "Pinecrest Insurance",
             "Veloce Mobility", "Cobalt Robotics", "Sundial Media", "Arbor Logistics", "Nimbus Cloud")
JOBS = ("nurse", "data engineer", "architect", "primary school teacher", "product manager", "translator",
        "chef", "physiotherapist", "lawyer", "UX designer", "electrician", "journalist", "accountant",
        "biologist", "pilot", "pharmacist", "carpenter", "researcher", "software engineer", "veterinarian")
PROJECTS = ("billing migration", "Kafka rollout", "mobile app redesign", "quarterly report", "search revamp",
            "onboarding flow", "data warehouse move", "GDPR audit", "pricing experiment", "API v2 launch",
            "Kubernetes upgrade", "hiring plan", "customer dashboard", "fraud model", "office move")
BOOKS = (("The Left Hand of Darkness", "Ursula K. Le Guin"), ("Blindness", "José Saramago"),
         ("Klara and the Sun", "Kazuo Ishiguro"), ("The Book of Disquiet", "Fernando Pessoa"),
         ("Middlemarch", "George Eliot"), ("Piranesi", "Susanna Clarke"), ("The Overstory", "Richard Powers"),
         ("Stoner", "John Williams"), ("Beloved", "Toni Morrison"), ("Project Hail Mary", "Andy Weir"),
         ("The Magic Mountain", "Thomas Mann"), ("Pachinko", "Min Jin Lee"), ("Dune", "Frank Herbert"),
         ("Normal People", "Sally Rooney"), ("The Remains of the Day", "Kazuo Ishiguro"))
FILMS = ("Past Lives", "Perfect Days", "Drive My Car", "Aftersun", "The Zone of Interest", "Anatomy of a Fall",
         "Spirited Away", "Paterson", "Portrait of a Lady on Fire", "Arrival", "Roma", "Tár", "Oppenheimer")
OPINIONS = ("slow but beautiful", "overrated", "moving", "hard to put down", "too long", "funny", "bleak",
            "brilliant", "confusing", "surprisingly tender", "forgettable", "one of the best in years")
TIMES = ("last Saturday", "last weekend", "on a rainy Tuesday", "in early March", "during the summer holidays",
         "over Easter", "on New Year's Eve", "last month", "two weeks ago", "on Sunday morning", "in late October",
         "after work on Friday", "during the heatwave", "at the end of January", "on her birthday",
         "last Christmas", "in spring", "on a long weekend in May")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
HOURS = ("9:00", "9:30", "10:00", "11:15", "13:00", "14:30", "15:00", "16:45", "17:30")
ALLERGENS = ("penicillin", "peanuts", "shellfish", "cat hair", "pollen", "latex", "sesame", "wasp stings")
SERVICES = ("the gym in Friedrichshain", "a music streaming plan", "the phone contract", "cloud storage",
            "a newspaper subscription", "the climbing hall", "home insurance", "the BVG monthly ticket",
            "a language app", "the co-working desk", "electricity", "internet at home")
DEVICES = ("laptop", "home server", "phone", "Raspberry Pi", "NAS", "work laptop", "router")
SOFTWARE = ("Debian", "Fedora", "Ubuntu", "NixOS", "Arch Linux", "macOS", "Android", "OpenWrt", "Proxmox")
REASONS = ("it tastes like soap", "it upsets their stomach", "the texture is strange", "it reminds them of school",
           "it is too spicy", "they had a bad experience once", "it is too sweet", "the smell is too strong")
EVENTS = ("a wedding", "a conference", "a job interview", "a friend's birthday", "a climbing trip",
          "a football match", "a concert", "a funeral", "a hackathon", "a family reunion", "a marathon")
SKILLS = ("German", "Japanese", "the cello", "watercolour painting", "Rust", "sign language", "swimming crawl",
          "Italian cooking", "bookkeeping", "improv theatre", "touch typing", "Portuguese guitar")
ROUTES = ("the Landwehr canal", "the Tempelhof field", "the Tagus river", "the Spree", "the Grunewald lakes",
          "the Tiergarten", "the Douro waterfront", "Monsanto park", "the Mauerweg")
OUTDOOR = ("hiking", "kayaking", "bouldering", "cycling", "swimming", "birdwatching", "skiing", "camping",
           "sailing", "mushroom picking")
SOURCES = ("muse", "telegram", "browser", "email:{hex}", "file:~/notes/{word}.md")


def _person(r: random.Random) -> tuple[str, str, str]:
    """`(phrase in a memory, phrase in a question, first name)`: "their sister Marta" / "my sister Marta"."""
    name, rel = r.choice(FIRST), r.choice(RELATIONS)
    return f"Owner's {rel} {name}", f"my {rel} {name}", name


def _slots(r: random.Random) -> dict:
    (pm, pq, name), (pm2, _, name2) = _person(r), _person(r)
    book, author = r.choice(BOOKS)
    return {"P": pm, "Pq": pq, "N": name, "P2": pm2, "N2": name2, "rel": r.choice(RELATIONS),
            "sur": r.choice(SURNAMES), "city": r.choice(CITIES), "city2": r.choice(CITIES),
            "dist": r.choice(DISTRICTS), "venue": r.choice(VENUES), "drink": r.choice(DRINKS),
            "drink2": r.choice(DRINKS), "food": r.choice(FOODS), "hobby": r.choice(HOBBIES),
            "obj": r.choice(OBJECTS), "adj": r.choice(ADJECTIVES), "shop": r.choice(SHOPS),
            "co": r.choice(COMPANIES), "job": r.choice(JOBS), "proj": r.choice(PROJECTS), "book": book,
            "author": author, "film": r.choice(FILMS), "op": r.choice(OPINIONS), "time": r.choice(TIMES),
            "day": r.choice(DAYS), "hour": r.choice(HOURS), "allergen": r.choice(ALLERGENS),
            "svc": r.choice(SERVICES), "dev": r.choice(DEVICES), "sw": r.choice(SOFTWARE),
            "ver": f"{r.randint(1, 14)}.{r.randint(0, 9)}", "reason": r.choice(REASONS), "event": r.choice(EVENTS),
            "skill": r.choice(SKILLS), "outdoor": r.choice(OUTDOOR), "route": r.choice(ROUTES), "km": r.randint(3, 42),
            "price": r.choice((12, 19, 25, 35, 49, 60, 80, 120, 150, 240, 320, 450, 900)),
            "n": r.randint(2, 9), "year": r.choice((2019, 2020, 2021, 2022, 2023, 2024, 2025))}


# (kind, memory template, question template); {P} etc. are slots from `_slots`.
TEMPLATES = (
    ("episode", "Owner had dinner with {P} at a {venue} in {dist} {time}.",
     "where did I eat with {N} {time}?"),
    ("preference", "Owner prefers {drink} over {drink2} in the morning.", "what do I like to drink in the morning?"),
    ("relationship", "{P} works as a {job} at {co} in {city}.", "where does {Pq} work?"),
    ("episode", "Owner bought a {adj} {obj} from {shop} for {price} euros {time}.",
     "how much did I pay for the {obj}?"),
    ("fact", "Owner is reading '{book}' by {author} and finds it {op}.", "what did I think of {book}?"),
    ("episode", "Owner's {obj} broke {time} and was repaired at {shop}.", "where did I get my {obj} fixed?"),
    ("episode", "Owner ran {km} kilometres along {route} {time}.", "how far did I run along {route}?"),
    ("fact", "Owner's meeting with {N} about the {proj} moved to {day} at {hour}.",
     "when is the {proj} meeting with {N}?"),
    ("preference", "Owner dislikes {food} because {reason}.", "why don't I eat {food}?"),
    ("relationship", "{P} is allergic to {allergen}.", "what is {N} allergic to?"),
    ("episode", "Owner flew to {city} for {event} {time}.", "why did I go to {city}?"),
    ("fact", "The {proj} at {co} has a deadline at the end of the quarter.", "when is the {proj} due?"),
    ("relationship", "{P} lives in {city} and is into {hobby}.", "what hobby does {N} have?"),
    ("episode", "Owner booked an appointment with Dr. {sur} for {day} at {hour}.", "when do I see Dr. {sur}?"),
    ("episode", "Owner watched {film} with {P} {time} and thought it was {op}.", "what did I think of {film}?"),
    ("fact", "Owner pays {price} euros a month for {svc}.", "how much is {svc} per month?"),
    ("fact", "Owner started learning {skill} with a teacher from {city} {time}.", "who teaches me {skill}?"),
    ("fact", "Owner's {dev} runs {sw} {ver}.", "which OS is on my {dev}?"),
    ("preference", "Owner loves {hobby} and goes every {day} evening.", "what do I do on {day} evenings?"),
    ("relationship", "{P} and {P2} met at {event} in {city}.", "how did {N} and {N2} meet?"),
    ("episode", "Owner lent {N} their {obj} {time} and has not got it back yet.", "who has my {obj}?"),
    ("fact", "Owner has lived in {dist} since {year}.", "since when do I live in {dist}?"),
    ("preference", "Owner's favourite {venue} is in {dist}, close to the canal.", "which {venue} do I like best?"),
    ("episode", "Owner and {N} went {outdoor} near {city} {time}.", "when did I go {outdoor} with {N}?"),
    ("fact", "Owner's team at {co} uses {sw} for the {proj}.", "what do we run the {proj} on?"),
    ("relationship", "{P} recommended '{book}' to Owner.", "who recommended {book} to me?"),
    ("episode", "Owner missed the train to {city} {time} and took a night bus instead.",
     "how did I get to {city} when I missed the train?"),
    ("fact", "Owner owes {N} {price} euros for the tickets to {event}.", "how much do I owe {N}?"),
    ("preference", "Owner never drinks {drink} after 4 pm because it keeps them awake.",
     "why do I avoid {drink} in the afternoon?"),
    ("insight", "Owner sleeps better on days with {hobby} in the evening.", "what helps me sleep?"),
    ("episode", "Owner hosted {n} friends for a {food} dinner {time}.", "how many people came to my dinner?"),
    ("fact", "Owner's {obj} is still under warranty until {year}.", "is my {obj} under warranty?"),
    ("relationship", "{P} is expecting a baby, due next spring.", "when is {N}'s baby due?"),
    ("episode", "Owner gave a talk about the {proj} at a meetup in {city} {time}.",
     "where did I present the {proj}?"),
    ("fact", "Owner keeps the spare key for {P}'s flat in {dist}.", "whose spare key do I have?"),
    ("document", "Rental contract: the flat in {dist} costs {price} euros per month, notice period three months.",
     "what is the notice period for my flat?"),
    ("document", "Invoice from {co}: {n} hours of consulting on the {proj}, {price} euros.",
     "how much did {co} invoice me?"),
    ("insight", "Owner tends to over-commit at work before holidays, as with the {proj}.",
     "do I take on too much at work?"),
    ("preference", "Owner finds {city} too crowded in summer but loves it in winter.",
     "when do I like visiting {city}?"),
    ("episode", "Owner cooked {food} with {N} {time}, and it came out {op}.", "how did the {food} turn out?"),
)


def _created_at(r: random.Random, end: datetime) -> str:
    """A creation time within the three years before `end`, skewed toward recent ones."""
    days = (1 - r.random() ** 0.7) * 3 * 365
    return (end - timedelta(days=days, seconds=r.randint(0, 86399))).strftime("%Y-%m-%dT%H:%M:%SZ")


def _source(r: random.Random) -> str:
    src = r.choice(SOURCES)
    return src.format(hex=f"{r.getrandbits(64):016x}", word=r.choice(("journal", "work", "health", "travel")))


def _generated(seed: int = SEED, end: datetime | None = None) -> Iterator[tuple[int, dict]]:
    """Endless `(template index, memory)` pairs in the order `memories` returns them: the first n of a seed are the
    same whatever n is asked for, so a 1M corpus starts with the 100k one."""
    r = random.Random(seed)
    end = end or datetime(2026, 11, 30, 12, tzinfo=UTC)
    seen: set[str] = set()
    weights = [1.0 + (i % 5 == 0) for i in range(len(TEMPLATES))]  # a few templates are more common
    positions = range(len(TEMPLATES))
    while True:
        t = r.choices(positions, weights)[0]
        kind, text, _ = TEMPLATES[t]
        content = text.format(**_slots(r))
        if content.startswith("Owner"):  # "Owner had dinner with their sister Marta", not "with Owner's sister"
            content = content[5:].replace("Owner's ", "their ").join(("Owner", ""))
        if content.casefold() in seen:
            continue
        seen.add(content.casefold())
        yield t, {"kind": kind, "content": content, "importance": round(r.uniform(0.25, 0.85), 2),
                  "source": _source(r), "created_at": _created_at(r, end)}


def memories(n: int, seed: int = SEED, end: datetime | None = None) -> list[dict]:
    """`n` distinct synthetic memories `{kind, content, importance, source, created_at}` (deterministic for a seed)."""
    return [m for _, m in itertools.islice(_generated(seed, end), n)]


def queries(n: int, seed: int = SEED + 1) -> list[str]:
    """`n` distinct first-person questions in the owner's voice, over the same vocabulary."""
    r = random.Random(seed)
    seen: list[str] = []
    while len(seen) < n:
        _, _, question = r.choice(TEMPLATES)
        q = question.format(**_slots(r))
        if q not in seen:
            seen.append(q)
    return seen


_FIRST_PERSON = {"is": "am", "has": "have", "does": "do", "goes": "go"}


def _first_person(content: str) -> str:
    """Owner's third-person sentence back in the owner's voice: "Owner pays ..." -> "I pay ..."."""
    text = re.sub(r"^Owner's ", "My ", content)
    text = re.sub(r"^Owner and ", "I and ", text)

    def verb(m: re.Match) -> str:
        adverb, word = m["adv"] or "", m["verb"]
        if word in _FIRST_PERSON:
            return f"I {adverb}{_FIRST_PERSON[word]}"
        if word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        return f"I {adverb}{word}"

    text = re.sub(r"^Owner (?P<adv>never |tends )?(?P<verb>[a-z]+)", verb, text)
    text = text.replace("I tends to", "I tend to").replace("I never drinks", "I never drink")
    text = re.sub(r"\bOwner's\b", "my", text)
    text = re.sub(r"\bOwner\b", "me", text)
    return re.sub(r"\btheir\b", "my", re.sub(r"\bthem\b", "me", text))


def owner_statements(n: int, seed: int) -> list[str]:
    """`n` distinct one-sentence statements in the owner's voice ("I had dinner with my sister Marta ...")."""
    out = dict.fromkeys(_first_person(m["content"]) for m in memories(n * 2, seed=seed))
    return list(out)[:n]


# -- the cache ---------------------------------------------------------------------------------
def cache_dir(n: int) -> Path:
    """`bench/out/cache/corpus-v<version>-n<N>/`; its `data/` is a twin data dir (twin.db, index/)."""
    return CACHE_DIR / f"corpus-v{GENERATOR_VERSION}-n{n}"


def ensure_store(n: int, log=print, rebuild_index: bool = False) -> tuple[Path, dict]:
    """Build, or reuse, the cached twin data dir for `n` memories; returns `(data dir, build info)`.

    Resumable: memories are inserted in one transaction, vectors are saved batch by batch (an interrupted
    run continues with the memories still pending), and the index is built by `IndexWriter` at the end.
    """
    from twin.activity import Activity
    from twin.settings import Settings
    from twin.store import Store
    from twin.vectors.embedder import LocalEmbedder
    from twin.vectors.index import VectorIndex
    from twin.vectors.sidecar import IndexWriter

    root = cache_dir(n)
    data = root / "data"
    info_path = root / "build.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {"n": n, "version": GENERATOR_VERSION}
    if info.get("complete") and not rebuild_index:
        return data, {**info, "built_now": False}
    settings = Settings(data_dir=data, runtime_dir=root / "run", config_dir=root / "config")
    store = Store(settings.db_path).open()
    try:
        if store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] != n:
            store.close()
            shutil.rmtree(data, ignore_errors=True)
            store = Store(settings.db_path).open()
            started = time.perf_counter()
            with store.atomic():
                for m in memories(n):
                    store.insert_memory(BEING, m["kind"], m["content"], m["source"], m["importance"],
                                        created_at=m["created_at"])
            info["insert_s"] = time.perf_counter() - started
            log(f"corpus: inserted {n} memories in {info['insert_s']:.1f} s")
        embedder = LocalEmbedder(settings.embed_threads)
        embedder.open()
        pending = store.count_pending_embeddings(embedder.model_id)
        if pending:
            started, done = time.perf_counter(), 0
            while batch := store.pending_embeddings(embedder.model_id, 960):
                store.save_embeddings([i for i, _ in batch], embedder.embed([c for _, c in batch]), embedder.model_id)
                done += len(batch)
                if done % 9600 < 960:
                    rate = done / (time.perf_counter() - started)
                    log(f"corpus: embedded {done}/{pending} ({rate:.0f}/s, ~{(pending - done) / rate:.0f} s left)")
            info["embed_s"] = info.get("embed_s", 0) + time.perf_counter() - started
            info["embed_rate_per_s"] = pending / (time.perf_counter() - started)
        del embedder
        if rebuild_index or not info.get("index_build_s"):
            shutil.rmtree(settings.index_path.parent, ignore_errors=True)
            index = VectorIndex(settings.index_path, LocalEmbedder.dim, LocalEmbedder.model_id, m=settings.index_m,
                                ef_construction=settings.index_ef_construction, ef_search=settings.index_ef_search)
            started = time.perf_counter()
            IndexWriter(store, index, Activity(store, BEING)).open()
            info["index_build_s"] = time.perf_counter() - started
            info["index_bytes"] = settings.index_path.stat().st_size
            log(f"corpus: IndexWriter built the index of {n} vectors in {info['index_build_s']:.1f} s")
        info["complete"] = True
        info["db_bytes"] = settings.db_path.stat().st_size
    finally:
        store.close()
    info_path.write_text(json.dumps(info, indent=2))
    return data, {**info, "built_now": True}


# -- a larger store whose vectors are derived from the real ones -----------------------------------
DERIVED_BASE_N = 100_000
"""The store whose real (model-embedded) vectors the derived vectors of a larger store are made from."""
DERIVED_NOISE_NORM = 0.3
"""Length of the Gaussian noise added to each derived vector before it is renormalised. At 0.3 a derived vector's
cosine to its nearest real vector has the median of a held-out real vector's (0.92-0.93, measured on 56k real vectors
against half of them), and 99 % of its 10 nearest real vectors come from its own template, as for real ones."""
DERIVED_CHUNK = 20_000
"""Memories inserted, or vectors saved, per transaction while building a derived store (each one resumes there)."""


def derived_cache_dir(n: int, base_n: int = DERIVED_BASE_N) -> Path:
    """`bench/out/cache/corpus-v<version>-n<N>-derived-from-n<base>/`; its `data/` is a twin data dir."""
    return CACHE_DIR / f"corpus-v{GENERATOR_VERSION}-n{n}-derived-from-n{base_n}"


def derived_vectors(ids: np.ndarray, templates: np.ndarray, base: np.ndarray, base_templates: np.ndarray,
                    seed: int = SEED) -> np.ndarray:
    """`(len(ids), dim) float32` unit vectors for memories `ids` (int64) made from template indexes `templates`:
    each is a random point on the arc between two different real vectors of `base` (`(base_n, dim)`, row i =
    memory i + 1) whose memories come from the same template, plus Gaussian noise of length ~`DERIVED_NOISE_NORM`,
    renormalised. Deterministic for the same `ids` (the random generator is seeded by `seed` and the first id)."""
    rng = np.random.default_rng((seed, int(ids[0]) if len(ids) else 0))
    order = np.argsort(base_templates, kind="stable")  # base rows grouped by template
    starts = np.searchsorted(base_templates[order], templates)
    counts = np.searchsorted(base_templates[order], templates, side="right") - starts
    first = (rng.random(len(ids)) * counts).astype(np.int64)
    second = (first + 1 + (rng.random(len(ids)) * (counts - 1)).astype(np.int64)) % counts  # never the first
    a, b = base[order[starts + first]], base[order[starts + second]]
    w = rng.random((len(ids), 1), dtype=np.float32)
    dim = base.shape[1]
    noise = rng.standard_normal((len(ids), dim), dtype=np.float32) * (DERIVED_NOISE_NORM / dim ** 0.5)
    out = w * a + (1 - w) * b + noise
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def ensure_derived_store(n: int, base_n: int = DERIVED_BASE_N, log=print,
                         rebuild_index: bool = False) -> tuple[Path, dict]:
    """Build, or reuse, a cached twin data dir of `n` memories (`memories(n)`, real texts and FTS5 rows) whose first
    `base_n` vectors are the real ones of `ensure_store(base_n)` and the rest `derived_vectors` of them, the index
    built by `IndexWriter` at the shipped settings; returns `(data dir, build info)`, as `ensure_store`.

    Embedding a million texts with the real model takes ~70 min of both cores at the measured 243/s, so the extra
    vectors are made from the real ones (the bench's docstring says why that is fair for latency). Resumable: memories
    are inserted and vectors saved `DERIVED_CHUNK` per transaction, each phase continuing where an interrupted run
    stopped (the vectors wait for the base store, built by `ensure_store` or by another process at the time); the
    index build starts again if it was interrupted. Raises `RuntimeError` when the base store does not hold
    `memories(base_n)` in id order with one vector each, or this store's rows are not `memories(n)` in id order.
    """
    import contextlib
    import sqlite3

    from twin.activity import Activity
    from twin.settings import Settings
    from twin.store import Store
    from twin.vectors.embedder import LocalEmbedder
    from twin.vectors.index import VectorIndex
    from twin.vectors.sidecar import IndexWriter

    root = derived_cache_dir(n, base_n)
    data = root / "data"
    info_path = root / "build.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {
        "n": n, "version": GENERATOR_VERSION, "vectors": f"first {base_n} real, the rest derived_vectors of them"}
    if info.get("complete") and not rebuild_index:
        return data, {**info, "built_now": False}
    settings = Settings(data_dir=data, runtime_dir=root / "run", config_dir=root / "config")
    model_id = LocalEmbedder.model_id

    def save_info() -> None:
        info_path.write_text(json.dumps(info, indent=2))

    data.mkdir(parents=True, exist_ok=True)
    store = Store(settings.db_path).open()
    try:
        have = store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        templates = np.empty(n, dtype=np.int16)  # memory id i + 1 came from template templates[i]
        expected: dict[int, str] = {}  # a few ids and their contents, checked against the store below
        started, batch = time.perf_counter(), []
        for i, (t, m) in enumerate(itertools.islice(_generated(), n)):
            templates[i] = t
            if i + 1 in (1, base_n, have, n):
                expected[i + 1] = m["content"]
            if i >= have:
                batch.append(m)
            if len(batch) == DERIVED_CHUNK or (i == n - 1 and batch):
                with store.atomic():
                    for b in batch:
                        store.insert_memory(BEING, b["kind"], b["content"], b["source"], b["importance"],
                                            created_at=b["created_at"])
                batch = []
                log(f"corpus: {i + 1}/{n} memories in the derived store ({time.perf_counter() - started:.0f} s)")
        for mid, content in expected.items():
            row = store.conn.execute("SELECT content FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is None or row[0] != content:
                raise RuntimeError(f"memory {mid} of {settings.db_path} is not memories({n})[{mid - 1}]")
        if have < n:
            info["insert_s"] = info.get("insert_s", 0) + time.perf_counter() - started
            save_info()
        base_data = _base_store(base_n, log)
        with contextlib.closing(sqlite3.connect(f"file:{base_data / 'twin.db'}?mode=ro", uri=True)) as src:
            rows = src.execute("SELECT memory_id, vector FROM memory_embeddings WHERE model_id = ? ORDER BY memory_id",
                               (model_id,)).fetchall()
            base_texts = dict(src.execute("SELECT id, content FROM memories WHERE id IN (1, ?)", (base_n,)))
        if [r[0] for r in rows] != list(range(1, base_n + 1)) or any(expected[i] != base_texts.get(i)
                                                                       for i in (1, base_n)):
            raise RuntimeError(f"{base_data} does not hold memories({base_n}) in id order, each with one vector")
        base = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(base_n, -1)
        del rows
        started, done = time.perf_counter(), 0
        while pending := [i for i, _ in store.pending_embeddings(model_id, DERIVED_CHUNK)]:
            ids = np.asarray(pending, dtype=np.int64)
            real = ids <= base_n  # the base's own memories keep their real vectors
            vectors = np.empty((len(ids), base.shape[1]), dtype=np.float32)
            vectors[real] = base[ids[real] - 1]
            vectors[~real] = derived_vectors(ids[~real], templates[ids[~real] - 1], base, templates[:base_n])
            store.save_embeddings(pending, vectors, model_id)
            done += len(pending)
            log(f"corpus: {done} vectors saved, real or derived ({time.perf_counter() - started:.0f} s)")
        if done:
            info["derive_s"] = info.get("derive_s", 0) + time.perf_counter() - started
            save_info()
        if rebuild_index or not info.get("index_build_s"):
            shutil.rmtree(settings.index_path.parent, ignore_errors=True)
            index = VectorIndex.for_settings(settings, model_id, LocalEmbedder.dim)
            info["index_build_load_before"] = load_note()
            log(f"corpus: building the index of {n} vectors ({info['index_build_load_before']})")
            started = time.perf_counter()
            IndexWriter(store, index, Activity(store, BEING)).open()
            info["index_build_s"] = time.perf_counter() - started
            info["index_bytes"] = settings.index_path.stat().st_size
            info["index_build_load_after"] = load_note()
            log(f"corpus: IndexWriter built the index of {n} vectors in {info['index_build_s']:.1f} s")
        info["complete"] = True
        info["db_bytes"] = settings.db_path.stat().st_size
    finally:
        store.close()
    save_info()
    return data, {**info, "built_now": True}



def _base_store(base_n: int, log) -> Path:
    """`ensure_store(base_n)`'s data dir; while another process is still building it (its database written to in
    the last 5 minutes and no complete `build.json`), wait for that build instead of starting a second one."""
    info_path = cache_dir(base_n) / "build.json"
    db = cache_dir(base_n) / "data" / "twin.db"
    while not (info_path.exists() and json.loads(info_path.read_text()).get("complete")):
        wal = db.with_name("twin.db-wal")
        touched = max((p.stat().st_mtime for p in (db, wal) if p.exists()), default=0)
        if time.time() - touched > 300:
            break
        log(f"corpus: waiting for another process to finish building {cache_dir(base_n)}")
        time.sleep(30)
    return ensure_store(base_n, log=log)[0]
