"""Secrets in a watched folder, end to end on a real folder, real Redis and the real learn worker: a structured
file keeps the key that names its secret ("password: …", sensitive), a table's rows are one memory each naming
their columns, a seed phrase never takes the paragraph after a blank line nor a sentence on the next line, and a
short locker code on its own line is kept (sensitive). Files written for these tests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import drain
from secret_corpus import seed

from twin.connectors.files import FilesConnector
from twin.workers.bus import Bus

PHRASE = seed().split()


@pytest.fixture
def root(tmp_path) -> Path:
    path = (tmp_path / "vault").resolve()
    (path / "acc").mkdir(parents=True)
    return path


def learned(twin_env, store, redis, activity, root: Path) -> dict[str, list[tuple[str, str]]]:
    """Scan `root` once, run the workers, and return `{file name: [(content, sensitivity)]}`."""
    connector = FilesConnector(twin_env.model_copy(update={"files_roots": [root]}), store, Bus(redis), activity)
    asyncio.run(connector.scan_once())
    drain()
    out: dict[str, list[tuple[str, str]]] = {}
    for path in root.rglob("*"):
        if path.is_file():
            ids = store.ids_by_source(twin_env.being, f"file:{path}")
            out[path.name] = [(store.get(i).content, store.get(i).sensitivity) for i in sorted(ids)]
    return out


def test_structured_files_keep_their_labels_and_are_sensitive(twin_env, store, activity, redis, root):
    (root / "acc" / "router.json").write_text(json.dumps(
        {"model": "FRITZ!Box 7590", "admin": {"user": "owner", "password": "Kettle-Moon-58", "pin": 1942},
         "comment": "The router sits in the hallway cupboard."}, indent=2))
    (root / "acc" / "mail.json").write_text(json.dumps({"smtp_token": "Zr81kQmW0pLx3vTn9yBsQ4"}))
    (root / "acc" / "logins.csv").write_text("service,user,password\nbank,owner,Maple&Stone9\n"
                                             "library,o.meyer,reading lamp green\n")
    found = learned(twin_env, store, redis, activity, root)
    router = found["router.json"]
    assert ("acc/router.json: password: Kettle-Moon-58", "sensitive") in router, router
    assert ("acc/router.json: pin: 1942", "sensitive") in router, router
    assert any("hallway cupboard" in c and s == "private" for c, s in router)
    assert found["mail.json"] == [("acc/mail.json: smtp token: Zr81kQmW0pLx3vTn9yBsQ4", "sensitive")]
    rows = found["logins.csv"]
    assert len(rows) == 2 and all(s == "sensitive" for _, s in rows), rows
    assert any("service: bank" in c and "password: Maple&Stone9" in c for c, _ in rows)
    assert any("user: o.meyer" in c and "reading lamp green" in c for c, _ in rows)


def test_a_seed_phrase_never_takes_the_next_paragraph_or_line(twin_env, store, activity, redis, root):
    (root / "wallet.txt").write_text(f"Hardware wallet backup words:\n{' '.join(PHRASE[:6])}\n"
                                     f"{' '.join(PHRASE[6:])}\n\nOwner renewed the domain in March.\n")
    (root / "cold.txt").write_text(f"Seed phrase: {' '.join(PHRASE)}\nOwner bought the steel plate in Porto.\n")
    (root / "gym.txt").write_text("Gym locker: 3391\nOwner swims on Tuesdays at the city pool.\n")
    found = learned(twin_env, store, redis, activity, root)
    for name, sentence in (("wallet.txt", "renewed the domain"), ("cold.txt", "steel plate")):
        holding = [(c, s) for c, s in found[name] if PHRASE[0] in c]
        assert len(holding) == 1 and holding[0][1] == "sensitive" and sentence not in holding[0][0], found[name]
        assert all(w in holding[0][0] for w in PHRASE)
        assert [s for c, s in found[name] if sentence in c] == ["private"], found[name]
    assert ("gym.txt: Gym locker: 3391", "sensitive") in found["gym.txt"]
    assert any("Tuesdays" in c and s == "private" for c, s in found["gym.txt"])
