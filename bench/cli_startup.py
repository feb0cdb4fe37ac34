"""Benchmark: how long an embedded ``stoker`` read of a small stack takes to start.

Times, each the minimum and the median of R runs of a fresh process (after one run
to warm the caches) on a SQLite store holding one small stack:

* floor        ``python -c "import click, rich, yaml, sqlalchemy"``: the libraries a
               read really needs (the command line, tables, the store)
* stack list   ``stoker stack list``
* stack show   ``stoker stack show demo``, and the other reads below

and the modules each imports that a read does not need (the API server: starlette,
uvicorn, the policy engine, Keystone's middleware; the cloud SDK; the job queue). What
is over the floor is stoker's own start: its store, and for a read that evaluates the
stored template (show, output show, resource list) the engine, the resource plugins and
the template functions. On a shared machine the minimum is the figure to compare.

Every process compiles its modules once into a private bytecode cache
(PYTHONPYCACHEPREFIX in a temporary directory), as an installed stoker has its .pyc
files: with PYTHONDONTWRITEBYTECODE set, an editable install would otherwise compile
all of stoker on every run while the floor's libraries load their cached bytecode.

Last measured (2026-11-28, two cores shared with other work, minimum of 9 runs, three
runs): floor 0.16-0.20 s; stack list 0.32-0.41 s, show 0.35-0.38 s, output show
0.33-0.40 s, resource list 0.34-0.36 s, event list 0.32 s: 1.6-2.1x the floor of the
same run. Before the plugin modules were imported from an index and yaql on first use
(main at c6ff6fd, same measure, same hour): 0.38-0.42 s, 2.3-2.6x.

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
NOT_NEEDED = ("starlette", "uvicorn", "oslo_policy", "keystonemiddleware", "openstack", "keystoneauth1", "procrastinate")
TEMPLATE = "heat_template_version: 2018-08-31\nresources:\n  word:\n    type: OS::Heat::RandomString\noutputs:\n  word:\n    value: {get_attr: [word, value]}\n"


def timed(command: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """(minimum, median) of ``runs`` runs, after one that fills the bytecode cache."""
    taken = []
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        taken.append(time.perf_counter() - started)
    return min(taken), statistics.median(taken)


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
        env = {
            **os.environ,
            "STOKER_DATABASE_URL": f"sqlite:///{directory}/bench.sqlite",
            "PYTHONPYCACHEPREFIX": f"{directory}/pycache",
        }
        env.pop("STOKER_URL", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        template = Path(directory) / "demo.yaml"
        template.write_text(TEMPLATE)
        subprocess.run(
            [STOKER, "stack", "create", "demo", "-t", str(template)],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        floor, floor_median = timed([sys.executable, "-c", FLOOR], env, runs)
        print(f"{'':<44} {'min':>6}   {'median':>6}")
        print(f"{'floor (' + FLOOR + ')':<44} {floor:6.2f} s {floor_median:6.2f} s")
        for args in (
            ["stack", "list"],
            ["stack", "show", "demo"],
            ["stack", "output", "show", "demo", "word"],
            ["stack", "resource", "list", "demo"],
            ["stack", "event", "list", "demo"],
        ):
            taken, median = timed([STOKER, *args], env, runs)
            extra = imported(args, env)
            print(
                f"{'stoker ' + ' '.join(args):<44} {taken:6.2f} s {median:6.2f} s  ({taken / floor:.1f}x floor; imports {', '.join(extra) or 'none'} of the unneeded)"
            )


if __name__ == "__main__":
    main()
