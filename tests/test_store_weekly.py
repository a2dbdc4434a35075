"""The page's weekly counts: one series per source type, whatever kind the memories share."""

from __future__ import annotations

from twin.store import weekly


def test_two_sources_of_one_kind_in_one_week_stay_two_series(store):
    for i in range(3):
        store.insert_memory("owner", "fact", f"Owner read chapter {i} of the atlas.", "import-books", 0.5,
                            created_at="2026-08-11T10:00:00Z")
    for i in range(5):
        store.insert_memory("owner", "fact", f"Owner watered linden number {i}.", "import-trees", 0.5,
                            created_at="2026-08-13T09:00:00Z")
    store.insert_memory("owner", "episode", "Owner wrote to Ana about the move.", "email:t1", 0.5,
                        created_at="2026-08-16T23:00:00Z")  # a Sunday: still the week of Monday 10 August
    store.insert_memory("owner", "fact", "Owner keeps bees.", "muse", 0.5, created_at="2026-08-17T00:00:00Z")
    rows = sorted(weekly.memories_per_week(store, "owner", "2026-08-01"))
    assert rows == [("2026-08-10", "email", 1), ("2026-08-10", "import-books", 3), ("2026-08-10", "import-trees", 5),
                    ("2026-08-17", "muse", 1)]
