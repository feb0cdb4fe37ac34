"""Benchmark: validate, create, update (every resource replaced) and delete N
independent OS::Heat::RandomString on the embedded default (a SQLite file).

Each N runs in a fresh process so its peak RSS is its own. Prints wall seconds per
phase and the process's peak RSS after each phase (peak RSS only grows, so the column
shows the high-water mark reached by the end of that phase).

    .venv/bin/python bench/lifecycle.py            # N = 100, 1000, 10000
    .venv/bin/python bench/lifecycle.py 100 1000   # chosen sizes
    .venv/bin/python bench/lifecycle.py --shape chain 100
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


def template(shape: str, count: int, length: int) -> str:
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    for index in range(count):
        lines += [f"  r{index}:", "    type: OS::Heat::RandomString", "    properties:", f"      length: {length}"]
        if shape == "chain" and index:
            lines.append(f"      salt: {{get_attr: [r{index - 1}, value]}}")
    return "\n".join(lines) + "\n"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(shape: str, count: int) -> dict:
    """Runs inside the child process."""
    from stoker.engine.validation import validate
    from stoker.environment.environment import Environment
    from stoker.service import Service, Source
    from stoker.settings import Settings

    results = {}
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(database_url=f"sqlite:///{Path(directory) / 'bench.sqlite'}", max_template_bytes=1 << 30)
        service = Service(settings)
        first = Source(template(shape, count, 8), "bench.yaml")
        second = Source(template(shape, count, 9), "bench.yaml")

        start = time.perf_counter()
        validate(service.parse_template(first), Environment(), {}, service.registry)
        results["validate"] = (time.perf_counter() - start, peak_rss_mib())

        start = time.perf_counter()
        stack = service.create_stack("bench", first)
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        results["create"] = (time.perf_counter() - start, peak_rss_mib())

        start = time.perf_counter()
        stack = service.update_stack("bench", second)
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        results["update"] = (time.perf_counter() - start, peak_rss_mib())

        start = time.perf_counter()
        stack = service.delete_stack("bench")
        assert stack.state == "DELETE_COMPLETE", stack.status_reason
        results["delete"] = (time.perf_counter() - start, peak_rss_mib())
        service.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 10000])
    parser.add_argument("--shape", choices=["independent", "chain"], default="independent")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.shape, args.sizes[0])))
        return
    print(f"shape={args.shape}  (seconds wall; MiB peak RSS of the whole process)")
    print(f"{'N':>7} {'phase':>9} {'seconds':>9} {'per res ms':>10} {'peak MiB':>9}")
    for count in args.sizes:
        output = subprocess.run(
            [sys.executable, __file__, "--child", "--shape", args.shape, str(count)], capture_output=True, text=True, check=False
        )
        if output.returncode != 0:
            print(f"{count:>7} failed:\n{output.stderr}")
            continue
        for phase, (seconds, rss) in json.loads(output.stdout.strip().splitlines()[-1]).items():
            print(f"{count:>7} {phase:>9} {seconds:>9.3f} {seconds / count * 1000:>10.3f} {rss:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
