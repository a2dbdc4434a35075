"""`twin mcp` driven by the MCP Inspector's CLI (`@modelcontextprotocol/inspector`, a client nobody here wrote),
exactly as its README runs it: tools/list, then memory_capture, memory_search and memory_forget, each a process
that spawns `twin mcp` over stdio. The Inspector comes from npm into `<venv>/mcp-inspector`
(`scripts/install.sh --test`; `TWIN_MCP_INSPECTOR` names another); without node or it, the test skips, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_clients import TWIN_BIN, host_env

from twin.operations.adoption import AGENT_TOOLS

INSPECTOR = Path(os.environ.get("TWIN_MCP_INSPECTOR")
                 or Path(sys.prefix) / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector")

pytestmark = pytest.mark.slow


def inspector(*args: str) -> dict:
    """`mcp-inspector --cli <venv>/bin/twin mcp -e K=V … ARGS`; its JSON answer (exit 0 asserted)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the MCP Inspector cannot run (apt-get install nodejs npm)")
    if not INSPECTOR.exists():
        pytest.skip(f"the MCP Inspector is not installed at {INSPECTOR} (scripts/install.sh --test installs it)")
    env_args = [a for k, v in host_env().items() for a in ("-e", f"{k}={v}")]
    done = subprocess.run([str(INSPECTOR), "--cli", str(TWIN_BIN), "mcp", *env_args, *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_inspector_lists_calls_and_forgets(twin_paths):
    listed = inspector("--method", "tools/list")["tools"]
    assert [t["name"] for t in listed] == list(AGENT_TOOLS)
    forget = next(t for t in listed if t["name"] == "memory_forget")
    assert forget["annotations"]["destructiveHint"] is True and forget["annotations"]["openWorldHint"] is False
    assert all("outputSchema" in t for t in listed)

    fact = "Owner's dentist appointment moved to Thursday at 9."
    captured = inspector("--method", "tools/call", "--tool-name", "memory_capture", "--tool-arg",
                         f"content={fact}")["structuredContent"]
    assert set(captured) == {"id"}
    found = inspector("--method", "tools/call", "--tool-name", "memory_search", "--tool-arg",
                      "query=when is the dentist appointment")
    assert found["structuredContent"]["results"][0]["id"] == captured["id"]
    assert found["structuredContent"]["trust"] == "untrusted"
    gone = inspector("--method", "tools/call", "--tool-name", "memory_forget", "--tool-arg",
                     f"id={captured['id']}")["structuredContent"]
    assert gone["ok"] is True and gone["id"] == captured["id"]
    again = inspector("--method", "tools/call", "--tool-name", "memory_search", "--tool-arg", "query=dentist")
    assert again["structuredContent"]["results"] == []
