"""Property-based fuzzing of the API against its own /openapi.json (schemathesis over real HTTP): for every
operation, generated inputs (valid and not) never get a 5xx, every answer has a documented status and content
type and matches its schema. Bounded: `EXAMPLES` per operation (the whole run well under two minutes)."""

from __future__ import annotations

from collections import Counter

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
"""Generated cases per operation (27 operations)."""
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def AUTH(api) -> dict:
    return {"Authorization": f"Bearer {api.token}"}


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """One API for the module over a store seeded with a few memories (ids 1-3 exist), keyword-only."""
    home = tmp_path_factory.mktemp("schema")
    with pytest.MonkeyPatch.context() as mp:
        isolated_home(mp, home)
        with running_api(load_settings()) as api:
            for text in ("Owner lives in Lisbon.", "Owner's bank card PIN is 8264.", "Owner keeps bees."):
                api.client.post("/v1/remember", json={"content": text}).raise_for_status()
            yield api


def test_no_5xx_and_every_answer_matches_its_schema(running):
    schema = schemathesis.openapi.from_url(f"{running.url}/openapi.json", headers=AUTH(running))
    failures, statuses = {}, Counter()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 25

    for operation in operations:
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def fuzz(case):
            response = case.call_and_validate(headers=AUTH(running), checks=CHECKS)
            statuses[response.status_code] += 1

        try:
            fuzz()
        except Exception as exc:  # one line per failing operation; all are reported together
            failures[operation.label] = f"{type(exc).__name__}: {str(exc)[:600]}"
    print(f"schemathesis: {len(operations)} operations, {sum(statuses.values())} calls, statuses {dict(statuses)}")
    assert not failures, "\n".join(f"{label}: {why}" for label, why in failures.items())
