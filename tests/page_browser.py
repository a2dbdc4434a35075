"""What the page's browser tests share: the system's chromium (Playwright cannot download browsers here, so it
drives Debian's: `executable_path`), axe-core from npm (installed by `scripts/install.sh --test` into the venv),
a store of realistic generated memories, and where screenshots go (`TWIN_PAGE_SCREENSHOTS`, never the repo)."""

from __future__ import annotations

import os
import random
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from twin.store import Store

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "/usr/bin/chromium")
"""Where the browser is looked for after `TWIN_TEST_CHROMIUM`."""
AXE_RELATIVE = Path("axe-core/node_modules/axe-core/axe.min.js")
"""axe-core inside the venv (`scripts/install.sh --test`)."""


def need(thing: str, path: str | None) -> str:
    """`path`, or skip saying `thing` is missing (and fail instead under CI=true: CI installs it)."""
    if path:
        return path
    message = f"{thing} is not installed (bash scripts/install.sh --test installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def chromium_path() -> str:
    """The chromium binary to drive (`TWIN_TEST_CHROMIUM`, else the first of `CHROMIUM_CANDIDATES` found)."""
    given = os.environ.get("TWIN_TEST_CHROMIUM")
    unpacked = Path(sys.prefix) / "chromium" / "chromium"  # scripts/install.sh --test without root
    found = given if given and Path(given).exists() else next(
        (p for p in (shutil.which(c) for c in CHROMIUM_CANDIDATES) if p), str(unpacked) if unpacked.exists() else None)
    return need("chromium", found)


def axe_path() -> str:
    """axe.min.js (`TWIN_TEST_AXE`, else inside the venv)."""
    given = os.environ.get("TWIN_TEST_AXE")
    candidate = Path(given) if given else Path(sys.prefix) / AXE_RELATIVE
    return need("axe-core", str(candidate) if candidate.exists() else None)


def screenshot_dir() -> Path | None:
    """The folder for screenshots (`TWIN_PAGE_SCREENSHOTS`), made; None when unset (no screenshots)."""
    folder = os.environ.get("TWIN_PAGE_SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


PEOPLE = ("Marta Weber", "Jonas Silva", "Aiko Tanaka", "Lena Okafor", "Tomás Novak", "Inês Costa", "Yusuf Haddad",
          "Priya Nguyen", "Chen Fischer", "Sofia Moreau", "Mateo Petrov", "Hannah Jensen")
RELATIONS = ("sister", "colleague", "neighbour", "friend", "cousin", "manager", "dentist", "flatmate")
PLACES = ("Lisbon", "Porto", "Leipzig", "Kyoto", "Lagos", "Prague", "Valencia", "Bergen", "Montreal", "Tbilisi")
THINGS = ("sourdough", "bouldering", "the roof repair", "a used cargo bike", "Spanish lessons", "the tax return",
          "a birthday dinner", "the garden beds", "a new laptop", "marathon training", "the school run")
TEMPLATES = (
    ("relationship", "Owner's {rel} {person} lives in {place}."),
    ("episode", "Owner had dinner with {person} in {place} and talked about {thing}."),
    ("preference", "Owner prefers {thing} over most weekend plans."),
    ("fact", "Owner decided to spend {n} euros on {thing}."),
    ("episode", "Owner called {person} about {thing} on a rainy evening."),
    ("insight", "Owner tends to postpone {thing} when work gets busy."),
    ("document", "Owner's notes on {thing} list {n} open questions."),
    ("fact", "Owner booked a trip to {place} for {thing}."),
)
SOURCES = ("file:/home/owner/notes/{word}.md", "email:{hex}", "browser", "telegram:4242", "muse")


def corpus(n: int, seed: int = 17, end: datetime | None = None) -> list[dict]:
    """`n` distinct generated memories `{kind, content, source, importance, created_at}` spread over the 200 days
    before `end` (deterministic for a seed)."""
    r = random.Random(seed)
    end = end or datetime.now(UTC)
    seen: set[str] = set()
    out: list[dict] = []
    while len(out) < n:
        kind, template = r.choice(TEMPLATES)
        content = template.format(rel=r.choice(RELATIONS), person=r.choice(PEOPLE), place=r.choice(PLACES),
                                  thing=r.choice(THINGS), n=r.randint(2, 2000))
        if content in seen:
            continue
        seen.add(content)
        source = r.choice(SOURCES).format(word=r.choice(("garden", "work", "travel", "health")),
                                          hex=f"{r.getrandbits(48):012x}")
        at = end - timedelta(days=r.random() * 200, seconds=r.randint(0, 86399))
        out.append({"kind": kind, "content": content, "source": source, "importance": round(r.uniform(0.2, 0.9), 2),
                    "created_at": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return out


def fill(db_path: Path, being: str, rows: list[dict]) -> list[int]:
    """Insert `rows` (`corpus`'s shape, plus optional `sensitivity`) into the store at `db_path`; their ids."""
    with Store(db_path) as store, store.atomic():
        return [store.insert_memory(being, r["kind"], r["content"], r["source"], r["importance"],
                                    created_at=r["created_at"], sensitivity=r.get("sensitivity", "private"),
                                    provenance={"source_type": r["source"].split(":")[0],
                                                "captured_from": r["source"], "confidence": 0.8})
                for r in rows]
