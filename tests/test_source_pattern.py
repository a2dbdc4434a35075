"""A source that ends in `*`: the CLI's pattern ("every source that starts so") only where the owner typed it; the
page's "forget everything from this source" forgets exactly that one source, `*` and all."""

from __future__ import annotations

import json

from in_process import twin_cli

from twin.text.source_pattern import SourcePattern

KAYAK = "Owner owns a red kayak named Wisp for river trips."
BOOKS = ["Owner read 'The Overstory' in the spring of 2024.", "Owner gave away the paperback atlas to a neighbour."]
TREES = "Owner planted a young linden tree behind the shed."


def test_the_pattern_reads_a_star_as_a_stem_unless_told_the_source_is_exact():
    stem = SourcePattern.of("file:/notes/*")
    assert stem == SourcePattern("file:/notes/", True)
    assert stem.matches("file:/notes/a.md") and not stem.matches("file:/other/a.md")
    exact = SourcePattern.of("draft*", exact=True)
    assert exact.matches("draft*") and not exact.matches("draft-2") and not exact.matches("draft")
    plain = SourcePattern.of("email:abc")
    assert plain.matches("email:abc") and not plain.matches("email:abcd")


def _fill(api) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {}
    for source, texts in {"import*": [KAYAK], "import-books": BOOKS, "import_trees": [TREES]}.items():
        for text in texts:
            answer = api.client.post("/api/twin/memories", json={"kind": "fact", "content": text, "source": source})
            assert answer.status_code == 200, answer.text
            ids.setdefault(source, []).append(answer.json()["id"])
    return ids


def test_forgetting_the_source_of_one_memory_takes_that_source_alone(keyword_api):
    ids = _fill(keyword_api)
    counted = keyword_api.client.get("/v1/forget-source", params={"source": "import*"})
    assert counted.status_code == 200, counted.text
    assert counted.json()["counts"]["memories"] == 1
    done = keyword_api.client.post("/v1/forget-source", json={"source": "import*"})
    assert done.status_code == 200, done.text
    assert done.json()["removed"]["memories"] == 1
    gone = keyword_api.client.get(f"/v1/memories/{ids['import*'][0]}")
    assert gone.status_code == 404
    for source in ("import-books", "import_trees"):
        for memory_id in ids[source]:
            kept = keyword_api.client.get(f"/v1/memories/{memory_id}")
            assert kept.status_code == 200, (source, kept.text)


def test_a_forget_that_matches_nothing_says_so_and_prefix_reaches_every_source_that_starts_so(keyword_api):
    """`file:/dir/*` over the API answered ok with 0 removed while the CLI matched every file under it (found by a
    breaker run): nothing matched is a 404 with the hint, and `prefix` reads it as the CLI does."""
    ids = _fill(keyword_api)
    for call in (lambda: keyword_api.client.get("/v1/forget-source", params={"source": "impo*"}),
                 lambda: keyword_api.client.post("/v1/forget-source", json={"source": "impo*"})):
        missed = call()
        assert missed.status_code == 404 and missed.json()["error"]["field"] == "source", missed.text
        assert "prefix" in missed.json()["error"]["message"]
    assert all(keyword_api.client.get(f"/v1/memories/{i}").status_code == 200 for v in ids.values() for i in v)
    counted = keyword_api.client.get("/v1/forget-source", params={"source": "import-", "prefix": True})
    assert counted.json()["counts"]["memories"] == len(ids["import-books"])
    done = keyword_api.client.post("/v1/forget-source", json={"source": "import-*", "prefix": True})
    assert done.status_code == 200 and done.json()["removed"]["memories"] == len(ids["import-books"]), done.text
    assert all(keyword_api.client.get(f"/v1/memories/{i}").status_code == 404 for i in ids["import-books"])
    assert keyword_api.client.get(f"/v1/memories/{ids['import_trees'][0]}").status_code == 200
    again = keyword_api.client.post("/v1/forget-source", json={"source": "import-", "prefix": True})
    assert again.status_code == 404 and "nothing is stored" in again.json()["error"]["message"]


def test_the_cli_pattern_still_reaches_every_source_that_starts_so(keyword_api):
    _fill(keyword_api)
    done = twin_cli("forget", "--source", "import*", "--dry-run", "--json")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert sorted(m["source"] for m in plan["memories"]) == ["import*", "import-books", "import-books",
                                                               "import_trees"]
    alone = twin_cli("forget", "--source", "import\\*", "--dry-run", "--json")  # a name that ends in * itself
    assert alone.returncode == 0, alone.stderr
    assert [m["source"] for m in json.loads(alone.stdout)["memories"]] == ["import*"]
