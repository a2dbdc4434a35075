"""Property-based fuzzing of the API against its own /openapi.json (schemathesis over real HTTP): for every
operation, generated inputs (valid and not) never get a 5xx, every answer has a documented status and content
type and matches its schema. Then the same with a second person's token (issue 19): besides those checks, no
answer to her carries a memory of a scope she does not reach (the owner's own, a project of someone else's).
Bounded: `EXAMPLES` per operation with the owner's token, `PERSON_EXAMPLES` with hers."""

from __future__ import annotations

from collections import Counter

import httpx
import pytest
import schemathesis
from api_server import running_api
from conftest import isolated_home
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from twin.settings import load_settings

EXAMPLES = 25
"""Generated cases per operation with the owner's token (34 operations)."""
PERSON_EXAMPLES = 10
"""Generated cases per operation with the second person's token (most of hers end in a 403 or a 422 early)."""
OWNER_TEXTS = ("Owner lives in Lisbon.", "Owner's bank card PIN is 8264.", "Owner keeps bees.")
OUT_OF_REACH = (*OWNER_TEXTS, "The owner's own project notes say the roof leaks.",
                "Bob's studio kiln fires at 1240 degrees.")
"""Memories the second person must never see: the owner's own, a project of the owner's not shared with her, a
project of a third person's."""
IN_REACH = ("Alice's own note: the pottery class is on Tuesdays.", "The shared flat's recycling goes out Thursdays.")
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def AUTH(api) -> dict:
    return {"Authorization": f"Bearer {api.token}"}


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """One API for the module over a store seeded with a few memories (ids 1-3 exist), keyword-only; people
    alice (her token in `api.alice`) and bob; the owner's project `roof` (not shared), the owner's `flat` shared
    with alice, bob's `studio`; one memory in each and one of alice's own."""
    home = tmp_path_factory.mktemp("schema")
    with pytest.MonkeyPatch.context() as mp:
        isolated_home(mp, home)
        with running_api(load_settings()) as api:
            for text in OWNER_TEXTS:
                api.client.post("/v1/remember", json={"content": text}).raise_for_status()
            tokens = {name: _add_person(name) for name in ("alice", "bob")}
            people = {name: httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {t}"}, timeout=30)
                      for name, t in tokens.items()}
            try:
                _seed(api.client, people["alice"], people["bob"])
            finally:
                for client in people.values():
                    client.close()
            api.alice = tokens["alice"]
            yield api


def _add_person(name: str) -> str:
    from twin.operations import Context
    from twin.operations.people import add_person

    ctx = Context.open(load_settings())
    try:
        return add_person(ctx, name).token
    finally:
        ctx.close()


def _seed(owner, alice, bob) -> None:
    """The projects and memories of `running`."""
    for who, project, members, text in ((owner, "roof", (), OUT_OF_REACH[3]), (bob, "studio", (), OUT_OF_REACH[4]),
                                        (owner, "flat", ("alice",), IN_REACH[1])):
        who.post("/v1/projects", json={"name": project}).raise_for_status()
        for person in members:
            who.post(f"/v1/projects/{project}/members", json={"person": person}).raise_for_status()
        who.post("/v1/remember", json={"content": text, "project": project}).raise_for_status()
    alice.post("/v1/remember", json={"content": IN_REACH[0]}).raise_for_status()


def no_other_scope(ctx, response, case) -> bool | None:
    """A check for the second person's run: no memory text out of her reach (`OUT_OF_REACH`) in any answer."""
    body = response.text
    leaked = [text for text in OUT_OF_REACH if text in body or text.replace("'", "\\u0027") in body]
    if leaked:
        raise AssertionError(f"{case.operation.label} answered another scope's memory: {leaked}")
    return None


def test_no_5xx_and_every_answer_matches_its_schema(running):
    _fuzz(running, AUTH(running), EXAMPLES, CHECKS)


def test_a_second_persons_answers_match_and_carry_no_other_scope(running):
    """The second person's run: the same checks, and `no_other_scope`. Her search for every seeded text first
    shows the check can fail: the owner's text is what she must not get, and she gets her own."""
    headers = {"Authorization": f"Bearer {running.alice}"}
    with httpx.Client(base_url=running.url, headers=headers, timeout=30) as alice:
        seen = alice.post("/v1/search", json={"query": "Lisbon PIN bees roof kiln pottery recycling",
                                              "project": "flat", "limit": 50}).text
    assert all(text not in seen for text in OUT_OF_REACH) and all(text in seen for text in IN_REACH)
    statuses = _fuzz(running, headers, PERSON_EXAMPLES, [*CHECKS, no_other_scope])
    assert statuses[200] > 0 and statuses[403] > 0  # she was answered, and refused where she may not go


def _fuzz(running, headers: dict, examples: int, checks: list) -> Counter:
    """Run every operation of the API's schema with `headers`, `examples` generated cases each, under `checks`;
    assert none failed (all failures reported together). Returns the statuses seen."""
    schema = schemathesis.openapi.from_url(f"{running.url}/openapi.json", headers=headers)
    failures, statuses = {}, Counter()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 25

    for operation in operations:
        @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def fuzz(case):
            response = case.call_and_validate(headers=headers, checks=checks)
            statuses[response.status_code] += 1

        try:
            fuzz()
        except Exception as exc:  # one line per failing operation; all are reported together
            failures[operation.label] = f"{type(exc).__name__}: {str(exc)[:600]}"
    print(f"schemathesis: {len(operations)} operations, {sum(statuses.values())} calls, statuses {dict(statuses)}")
    assert not failures, "\n".join(f"{label}: {why}" for label, why in failures.items())
    return statuses
