"""What each daemon process imports (issue 18: RSS of all the daemon's processes). The supervisor, the scheduler and
the learn worker never touch a vector or a model: numpy, hnswlib, onnxruntime and the OpenAI client (20-40 MB of
RSS each, measured by bench/daemon_rss.py) load only in the processes that use them, when they use them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "hnswlib", "onnxruntime", "tokenizers", "openai")


def loaded_after(code: str) -> list[str]:
    """The modules of `HEAVY` a fresh interpreter has loaded after running `code`."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\n"
                           f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize("process, code", [
    ("supervisor", "import twin.daemon.supervisor"),
    ("what `twin up` hands the connectors without Telegram",
     "from twin.cli.run import connector_extras\nfrom twin.settings import Settings\n"
     "assert connector_extras(Settings(_env_file=None)) == {}"),
    ("scheduler and learn worker", "import twin.workers.main, twin.workers.jobs, twin.workers.legacy_jobs"),
    ("the supervisor's lifecycle cursor and model id",
     "from twin.lifecycle.cycle import CURSOR\nfrom twin.settings import Settings\n"
     "from twin.vectors.embedder import model_id_of\nmodel_id_of(Settings(_env_file=None))"),
])
def test_processes_without_vectors_load_no_vector_or_model_library(process: str, code: str) -> None:
    assert loaded_after(code) == [], process


def test_a_store_loads_numpy_only_when_vectors_are_read(tmp_path: Path) -> None:
    opened = f"from twin.store import Store\nstore = Store({str(tmp_path / 'twin.db')!r}).open()\nstore.counts('owner')"
    assert loaded_after(opened) == []
    assert loaded_after(f"{opened}\nstore.stored_vectors([1], 'm')") == ["numpy"]


def test_the_api_app_loads_the_mcp_sdk_only_once_it_runs(tmp_path: Path) -> None:
    """Building the API's app (`create_app`) imports no part of the MCP SDK: `/mcp` is built after the app starts
    (`twin.api.mcp_route`), so the API's READY does not wait for the SDK (~0.6 CPU s; bench/daemon_rss.py)."""
    code = (f"import os\nos.environ.update(TWIN_DATA_DIR={str(tmp_path / 'data')!r}, "
            f"TWIN_CONFIG_DIR={str(tmp_path / 'config')!r}, TWIN_RUNTIME_DIR={str(tmp_path / 'run')!r}, "
            f"TWIN_ENV_FILE={str(tmp_path / 'env')!r})\n"
            "from twin.settings import load_settings\nfrom twin.store import Store\n"
            "from twin.api.app import create_app\nfrom twin.api.lanes import Lanes\n"
            "settings = load_settings()\nsettings.data_dir.mkdir(parents=True)\nStore(settings.db_path).open().close()\n"
            "create_app(settings, Lanes(settings, lambda: None))\nimport sys\n"
            "print(sorted({m.split('.')[0] for m in sys.modules if m == 'mcp' or m.startswith('mcp.')}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "[]"
