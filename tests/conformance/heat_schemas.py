"""Writes ``heat_27_resource_types.json`` beside it: the resource types Heat 27.0.1's
``resource_types`` API lists and each type's ``resource_schema``, dumped from Heat's own
code by ``heat_schema_dump.py``. ``test_heat_schemas.py`` compares stoker's registry with it.

Rerun (only when the Heat version changes; it takes a few minutes the first time)::

    .venv/bin/python -m tests.conformance.heat_schemas

Heat is installed in a side venv cached under ``~/.cache/stoker/heat-schemas/<key>``
(never in stoker's: Heat pins its own oslo and client libraries), with every package
pinned by ``tests/support/constraints/heat-schemas.txt``. Heat's wheel brings every client
library its plugin modules import (its requirements list them), and its
``etc/heat/environment.d/default.yaml`` and ``etc/heat/templates`` under the venv's prefix.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import venv_cache

HEAT = "openstack-heat==27.0.1"
FIXTURE = Path(__file__).with_name("heat_27_resource_types.json")
DUMP_SCRIPT = Path(__file__).with_name("heat_schema_dump.py")
BUILD_STEP_TIMEOUT_S = 1800
LOCK_WAIT_S = 1800


class HeatSchemaEnvironmentError(Exception):
    """Heat's side venv could not be built; the message names the step and its log."""


def environment_directory() -> Path:
    key = venv_cache.environment_key(
        [HEAT.encode() + b"\n", venv_cache.constraints_file("heat-schemas").read_bytes()]
    )
    return venv_cache.cache_directory("heat-schemas") / key


def heat_python() -> Path:
    """The side venv's Python, building the venv first if no complete one is cached."""
    directory = environment_directory()
    python = directory / "venv" / "bin" / "python"
    log_path = directory / "build.log"

    def build() -> None:
        directory.mkdir(parents=True, exist_ok=True)
        with open(log_path, "w") as log:
            venv_cache.run_steps(
                [
                    (
                        "create the venv",
                        None,
                        [sys.executable, "-m", "venv", "--clear", str(directory / "venv")],
                    ),
                    (
                        "install Heat",
                        HEAT,
                        [
                            str(python),
                            "-m",
                            "pip",
                            "install",
                            "-q",
                            "-c",
                            str(venv_cache.constraints_file("heat-schemas")),
                            HEAT,
                        ],
                    ),
                ],
                log,
                log_path,
                venv_cache.outside_environment(),
                BUILD_STEP_TIMEOUT_S,
                "Heat's schema venv",
                HeatSchemaEnvironmentError,
            )

    lock = venv_cache.cache_lock(
        venv_cache.cache_directory("heat-schemas"),
        directory.name,
        LOCK_WAIT_S,
        HeatSchemaEnvironmentError,
    )
    venv_cache.build_once(directory / "complete", lock, build)
    return python


def dump() -> dict:
    """Heat's listing and schemas, as ``heat_schema_dump.py`` prints them."""
    result = subprocess.run(
        [str(heat_python()), str(DUMP_SCRIPT)],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
        timeout=600,
    )
    if result.returncode != 0:
        raise HeatSchemaEnvironmentError(
            f"{DUMP_SCRIPT.name} failed (exit {result.returncode}):\n{result.stderr[-3000:]}"
        )
    return json.loads(result.stdout)


def main() -> None:
    data = dump()
    FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(
        f"{FIXTURE}: {len(data['resource_types'])} types listed, {len(data['hidden_types'])} hidden"
    )


if __name__ == "__main__":
    main()
