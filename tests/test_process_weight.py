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
