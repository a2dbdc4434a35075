"""The scopes the project attack tests start from (tests/test_projects_attacks.py, tests/test_people_telegram.py): the
owner's own memories (one sensitive), project `flat` of the owner's shared with alice (one sensitive), and project
`studio` of bob's, each written over the HTTP API with the writer's own client."""

from __future__ import annotations

from typing import NamedTuple

OWNER_SECRET = "Owner's bank card PIN is 8264."
OWNER_PLAIN = "Owner's allotment is plot 14 on Juniper Lane."
SHARED_SECRET = "The flat's alarm code is 5519."
SHARED_PLAIN = "The flat's recycling goes out on Thursday evenings."
OTHER = "The studio's kiln fires at 1240 degrees on Saturdays."


class Scopes(NamedTuple):
    """What `seed` made: the owner's memory ids (`mine`), the project ids `flat` and `studio`, bob's memory `other`."""

    mine: list[int]
    flat: str
    studio: str
    other: int


def seed(owner, bob) -> Scopes:
    """Write the scopes with `owner`'s and `bob`'s HTTP clients (httpx, each with its own bearer token); alice must
    exist already (she is made a member of `flat`)."""
    mine = [owner.post("/v1/remember", json={"content": t}).json()["id"] for t in (OWNER_SECRET, OWNER_PLAIN)]
    flat = owner.post("/v1/projects", json={"name": "flat"}).json()["id"]
    owner.post(f"/v1/projects/{flat}/members", json={"person": "alice"}).raise_for_status()
    for text in (SHARED_SECRET, SHARED_PLAIN):
        owner.post("/v1/remember", json={"content": text, "project": flat}).raise_for_status()
    studio = bob.post("/v1/projects", json={"name": "studio"}).json()["id"]
    other = bob.post("/v1/remember", json={"content": OTHER, "project": studio}).json()["id"]
    return Scopes(mine, flat, studio, other)
