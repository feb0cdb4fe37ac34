"""Benchmark: how long an embedded ``stoker`` read of a small stack takes to start.

Times, each the median of R runs of a fresh process on a SQLite store holding one
small stack:

* floor        ``python -c "import click, rich, yaml, sqlalchemy"``: the libraries a
               read really needs (the command line, tables, the store)
* stack list   ``stoker stack list``
* stack show   ``stoker stack show demo``

and the modules each imports that a read does not need (the API server: starlette,
uvicorn, the policy engine). What is over the floor is stoker's own start: the
engine, its plugins and the template functions it loads to answer.

    .venv/bin/python bench/cli_startup.py          # R = 5
    .venv/bin/python bench/cli_startup.py --runs 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STOKER = str(Path(sys.executable).with_name("stoker"))
FLOOR = "import click, rich, yaml, sqlalchemy"
NOT_NEEDED = ("starlette", "uvicorn", "oslo_policy", "procrastinate")
TEMPLATE = "heat_template_version: 2018-08-31\nresources:\n  word:\n    type: OS::Heat::RandomString\noutputs:\n  word:\n    value: {get_attr: [word, value]}\n"


def timed(command: list[str], env: dict[str, str], runs: int) -> float:
    taken = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        taken.append(time.perf_counter() - started)
    return statistics.median(taken)


def imported(args: list[str], env: dict[str, str]) -> list[str]:
    """The modules of NOT_NEEDED the command imports (``python -X importtime``)."""
    found = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import sys; from stoker.cli.main import main; sys.argv = ['stoker', *sys.argv[1:]]; main()",
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    names = {
        line.split("|")[-1].strip()
        for line in found.stderr.splitlines()
        if line.startswith("import time:")
    }
    return sorted(name for name in names if name.split(".")[0] in NOT_NEEDED and "." not in name)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as directory:
        env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{directory}/bench.sqlite"}
        env.pop("STOKER_URL", None)
        template = Path(directory) / "demo.yaml"
        template.write_text(TEMPLATE)
        subprocess.run(
            [STOKER, "stack", "create", "demo", "-t", str(template)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        floor = timed([sys.executable, "-c", FLOOR], env, runs)
        print(f"{'floor (' + FLOOR + ')':<58} {floor:6.2f} s")
        for args in (
            ["stack", "list"],
            ["stack", "show", "demo"],
            ["stack", "output", "show", "demo", "word"],
            ["stack", "resource", "list", "demo"],
        ):
            taken = timed([STOKER, *args], env, runs)
            extra = imported(args, env)
            print(
                f"{'stoker ' + ' '.join(args):<58} {taken:6.2f} s  (+{taken - floor:.2f} s; imports {', '.join(extra) or 'nothing'} of {', '.join(NOT_NEEDED)})"
            )


if __name__ == "__main__":
    main()
