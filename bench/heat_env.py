"""The virtual environment that runs OpenStack Heat for the comparison: bench/.heat-venv.

Owns creating it and installing openstack-heat 27.0.1 from PyPI into it; must not
touch stoker's own environment. Heat's in-process engine needs, beyond the package's
own requirements, ``fixtures`` (imported by heat/tests/utils.py, whose database and
context set-up heat_runner.py reuses). Every other version is pinned by
heat-constraints.txt, the set the comparison was verified with.

Idempotent: a marker file records what was installed; when it matches, ensure()
returns at once.

    python3 bench/heat_env.py          # create or check; prints the interpreter's path
    python3 bench/heat_env.py --force  # recreate from scratch
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
VENV = BENCH / ".heat-venv"
CONSTRAINTS = BENCH / "heat-constraints.txt"
REQUIREMENTS = ("openstack-heat==27.0.1", "fixtures")
MARKER = VENV / "stoker-bench.json"
# Imported once after installing: what heat_runner.py needs to start.
SMOKE = "import heat.engine.service, heat.tests.utils, heat.common.template_format"


def python() -> Path:
    return VENV / "bin" / "python"


def _wanted() -> dict:
    digest = hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest()
    return {"requirements": list(REQUIREMENTS), "constraints_sha256": digest}


def ready() -> bool:
    try:
        return python().exists() and json.loads(MARKER.read_text()) == _wanted()
    except (OSError, ValueError):
        return False


def ensure(force: bool = False, log=print) -> Path:
    """Creates or refreshes bench/.heat-venv when needed; returns its python."""
    if not force and ready():
        return python()
    if VENV.exists():
        shutil.rmtree(VENV)
    log(f"creating {VENV} and installing {' '.join(REQUIREMENTS)} (takes a few minutes once)")
    # sys.executable may itself be a venv's python; venv then builds on its base interpreter.
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run(
        [str(python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", str(CONSTRAINTS), *REQUIREMENTS],
        check=True,
    )
    subprocess.run([str(python()), "-W", "ignore", "-c", SMOKE], check=True)
    MARKER.write_text(json.dumps(_wanted()))
    return python()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--force", action="store_true", help="recreate the environment")
    args = parser.parse_args()
    print(ensure(args.force, log=lambda message: print(message, file=sys.stderr)))


if __name__ == "__main__":
    main()
