"""The import-linter contract in pyproject.toml ([tool.importlinter], the layers of ARCHITECTURE.md) holds: a
module imports from its own layer and the layers below, never from above."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint(config: Path) -> subprocess.CompletedProcess:
    """`lint-imports` over this checkout with `config`, in a fresh interpreter (the checkout first on the path)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_layers_contract_is_kept():
    result = _lint(ROOT / "pyproject.toml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_a_reversed_layer_breaks_the_contract(tmp_path):
    # learn imports text: a contract that puts text above learn must fail, so the test above can fail too
    config = tmp_path / "reversed.ini"
    config.write_text("[importlinter]\nroot_packages =\n    twin\n\n[importlinter:contract:reversed]\n"
                      "name = text above learn\ntype = layers\nlayers =\n    twin.text\n    twin.learn\n")
    result = _lint(config)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout and "twin.learn" in result.stdout
