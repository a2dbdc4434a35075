"""`twin up` serves the HTTP API (a supervised child process): the token file appears 0600, a request with it
works, one without is refused, and a memory written through the API is embedded by the daemon's worker and
found by meaning."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
from test_daemon import ROOT, start, wait_for

from twin.api.token import read_token


def test_twin_up_serves_the_api_with_its_token(daemon_env, tmp_path):
    """… run from a folder that holds a checkout named `twin` (cloned into ~/twin, run from ~): the children do not
    import that folder as the package (a breaker saw the API die of an ImportError, said as a port in use)."""
    url = f"http://127.0.0.1:{daemon_env['TWIN_API_PORT']}"
    token_path = Path(daemon_env["TWIN_CONFIG_DIR"]) / "api-token"
    home = tmp_path / "home"
    (home / "twin" / "twin" / "api").mkdir(parents=True)  # a checkout's shape: no __init__.py at its top
    proc = start(daemon_env, tmp_path / "daemon.log", cwd=home)
    try:
        token = wait_for(lambda: read_token(token_path), 90, "the API's token")
        assert token_path.stat().st_mode & 0o777 == 0o600

        def answers():
            try:
                return httpx.get(f"{url}/v1/stats", headers={"Authorization": f"Bearer {token}"}, timeout=5)
            except httpx.TransportError:
                return None

        assert wait_for(answers, 120, "the API").status_code == 200
        assert httpx.get(f"{url}/v1/stats", timeout=5).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        made = httpx.post(f"{url}/v1/capture", json={"content": "Owner's sailboat is called Wavelet."},
                          headers=auth, timeout=30).json()
        assert set(made) == {"id"}

        def embedded():
            found = httpx.post(f"{url}/v1/search", json={"query": "what is the name of my boat?"}, headers=auth,
                               timeout=60).json()
            return found if not found["degraded"] and found["results"] and found["results"][0]["vector"] > 0 else None

        found = wait_for(embedded, 120, "the daemon to embed the memory")
        assert found["results"][0]["id"] == made["id"]
        printed = subprocess.run([sys.executable, "-m", "twin", "token"], env=daemon_env, capture_output=True,
                                 text=True, cwd=ROOT)
        assert printed.returncode == 0 and printed.stdout.strip() == token
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(90) == 0
    assert "twin stopped cleanly." in (tmp_path / "daemon.log").read_text()
