"""The code base passes its linters, all configured in pyproject.toml: ruff, import-linter's layer
contracts (`lint-imports`, the floors of docs/architecture.md) and mypy."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_reports_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_layer_contracts_are_kept():
    # the floors of docs/architecture.md: no upward imports, resources/ never reaches the engine
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


# mypy passes (issue 31, "Contracts that keep it so"), and must stay so: no error is allowed.
MYPY_ERRORS_LEFT = 0


def test_mypy_finds_no_new_type_errors():
    mypy = Path(sys.executable).with_name("mypy")
    result = subprocess.run(
        [str(mypy), "--cache-dir", str(ROOT / ".mypy_cache")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    found = re.search(r"Found (\d+) errors? in", result.stdout)
    errors = int(found.group(1)) if found else 0
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert errors <= MYPY_ERRORS_LEFT, result.stdout
    assert (result.returncode == 0) == (errors == 0), result.stdout + result.stderr
