"""Benchmark: validate, create, update (a property changed on every resource) and
delete one generated stack on stoker's embedded default (a SQLite file).

The shapes are those of bench/shapes.py (independent, chain, group, fan), the same
templates compare.py gives OpenStack Heat. Each N runs in a fresh process so its peak
RSS is its own. Prints wall seconds per phase and the process's peak RSS after each
phase (peak RSS only grows, so the column shows the high-water mark reached by the end
of that phase). A shape whose resource types stoker lacks is reported as not
implemented.

    .venv/bin/python bench/lifecycle.py            # N = 100, 1000, 10000
    .venv/bin/python bench/lifecycle.py 100 1000   # chosen sizes
    .venv/bin/python bench/lifecycle.py --shape chain 100
    .venv/bin/python bench/lifecycle.py --child --shape fan 100   # one run, as JSON
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import shapes  # noqa: E402

PHASES = ("validate", "create", "update", "delete")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class PhaseError(Exception):
    """A phase ended in a state other than the one it must reach."""


def check(service, stack, expected: str, resources: int | None = None) -> None:
    if stack.state != expected:
        raise PhaseError(f"stack is {stack.state}: {stack.status_reason}")
    if resources is None:
        return
    found = service.list_resources("bench")
    incomplete = [f"{r.name} {r.state}" for r in found if r.status != "COMPLETE"]
    if len(found) != resources or incomplete:
        raise PhaseError(f"{len(found)} resources, {resources} expected; not COMPLETE: {incomplete[:5]}")


def run_one(shape: str, count: int) -> dict:
    """Runs inside the child process. The same JSON layout as heat_runner.py."""
    from stoker.engine.validation import validate
    from stoker.environment.environment import Environment
    from stoker.service import Service, Source
    from stoker.settings import Settings

    results: dict = {"baseline_rss_mib": peak_rss_mib(), "phases": {}, "error": None}
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(database_url=f"sqlite:///{Path(directory) / 'bench.sqlite'}", max_template_bytes=1 << 30, max_resources_per_stack=-1)
        service = Service(settings)
        missing = [name for name in shapes.TYPES[shape] if name not in service.registry.known_types()]
        if missing:
            service.close()
            return {**results, "unsupported": f"{', '.join(missing)} not implemented"}
        first = Source(shapes.template(shape, count, 0), "bench.yaml")
        second = Source(shapes.template(shape, count, 1), "bench.yaml")
        # Service.list_resources lists the top-level stack only.
        resources = shapes.resource_count(shape, count, nested=False)
        outcome = {}

        def validate_phase():
            validate(service.parse_template(first), Environment(), {}, service.registry)

        def create():
            outcome["stack"] = service.create_stack("bench", first)

        def update():
            outcome["stack"] = service.update_stack("bench", second)

        def delete():
            outcome["stack"] = service.delete_stack("bench")

        actions = (validate_phase, create, update, delete)
        checks = {
            "validate": lambda: None,
            "create": lambda: check(service, outcome["stack"], "CREATE_COMPLETE", resources),
            "update": lambda: check(service, outcome["stack"], "UPDATE_COMPLETE", resources),
            "delete": lambda: check(service, outcome["stack"], "DELETE_COMPLETE"),
        }
        for name, action in zip(PHASES, actions, strict=True):
            try:
                start = time.perf_counter()
                action()
                results["phases"][name] = {"seconds": time.perf_counter() - start, "peak_rss_mib": peak_rss_mib()}
                checks[name]()  # not timed
            except Exception as error:
                results["phases"].pop(name, None)
                results["error"] = f"{name}: {type(error).__name__}: {error}"
                break
        service.close()
    return results


def run_child(shape: str, count: int, python: str = sys.executable) -> dict:
    """One run in a fresh process; a crash becomes an ``error``."""
    output = subprocess.run(
        [python, __file__, "--child", "--shape", shape, str(count)], capture_output=True, text=True, check=False
    )
    lines = output.stdout.strip().splitlines()
    if output.returncode != 0 or not lines:
        tail = (output.stderr.strip().splitlines() or ["no output"])[-1]
        return {"phases": {}, "error": f"exit {output.returncode}: {tail}"}
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 10000])
    parser.add_argument("--shape", choices=shapes.SHAPES, default="independent")
    parser.add_argument("--child", action="store_true", help="run one size in this process and print JSON")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.shape, args.sizes[0])))
        return
    print(f"shape={args.shape}  (seconds wall; MiB peak RSS of the whole process)")
    print(f"{'N':>7} {'phase':>9} {'seconds':>9} {'per res ms':>10} {'peak MiB':>9}")
    for count in args.sizes:
        result = run_child(args.shape, count)
        if "unsupported" in result:
            print(f"{count:>7} n/a ({result['unsupported']})")
            continue
        for phase, measured in result["phases"].items():
            seconds, rss = measured["seconds"], measured["peak_rss_mib"]
            print(f"{count:>7} {phase:>9} {seconds:>9.3f} {seconds / count * 1000:>10.3f} {rss:>9.1f}", flush=True)
        if result["error"]:
            print(f"{count:>7} failed: {result['error']}")


if __name__ == "__main__":
    main()
