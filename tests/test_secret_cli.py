"""`twin learn` never echoes a secret value unless asked (`--sensitive`), text and JSON alike, and says where
the value is; `twin recall --sensitive` and `twin memories --sensitive` mark each sensitive result. The real CLI
in a subprocess on a real store; texts written here."""

from __future__ import annotations

import json

from conftest import run_worker
from secret_corpus import pem, pem_body
from test_cli import twin

BODY = pem_body(5)
KEY_TEXT = f"Here is the deploy key of the NAS:\n{pem('OPENSSH', BODY)}\n"
PASS_TEXT = "The garage wifi password is seven green frogs."


def test_learn_masks_secret_values_unless_sensitive(twin_env):
    out = twin("learn", "-", stdin=KEY_TEXT).stdout
    assert "(sensitive: the value is stored, `twin memories --sensitive` shows it)" in out
    assert "[redacted]" in out and not [line for line in BODY.split() if len(line) >= 8 and line in out]
    out = twin("learn", PASS_TEXT, "--json").stdout
    created = json.loads(out)["created"]
    assert created and all("seven green frogs" not in m["content"] for m in created)
    assert all(m["content_sha256"] == "" for m in created if m["sensitivity"] == "sensitive")  # a hash is the value
    shown = twin("learn", "My locker code at the pool is 6604.", "--sensitive").stdout
    assert "6604" in shown and "(sensitive)" in shown


def test_recall_and_memories_mark_sensitive_results(twin_env):
    twin("learn", PASS_TEXT)
    twin("learn", "The garage door squeaks when it rains.")
    run_worker("embed")
    recalled = twin("recall", "garage", "--sensitive").stdout.splitlines()
    marked = [line for line in recalled if "seven green frogs" in line]
    assert marked and all(line.endswith("[sensitive]") for line in marked)
    assert [line for line in recalled if "squeaks" in line and not line.endswith("[sensitive]")]
    listed = twin("memories", "--sensitive").stdout.splitlines()
    assert [line for line in listed if "seven green frogs" in line and line.endswith("[sensitive]")]
    assert not [line for line in twin("memories").stdout.splitlines() if "frogs" in line]
