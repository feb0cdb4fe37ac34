"""stoker beside OpenStack Heat 27.0.1 on the same generated stacks: one table.

Runs stoker (embedded, an SQLite file; lifecycle.py) and Heat's engine in-process
(heat_runner.py, in bench/.heat-venv which heat_env.py creates on first use) on the
shapes of shapes.py, through validate, create, update and delete; one fresh process
per (engine, shape, N, mode, repeat). Prints medians and flags a spread (slowest /
fastest repeat) over 1.3 as noisy. Raw results go to bench/results/.

    .venv/bin/python bench/compare.py --quick      # N = 10, 100: a few minutes
    .venv/bin/python bench/compare.py              # everything: hours (see README)
    .venv/bin/python bench/compare.py --shapes chain fan --sizes 100 --modes fast

Modes: "fast" is Heat with its scheduler's sleeps patched out, as its unit tests run
it (CPU and database cost); "production" keeps Heat's real 1-second step sleeps. stoker
has one mode, so its columns on a production row repeat its fast measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import heat_env  # noqa: E402
import lifecycle  # noqa: E402
import shapes  # noqa: E402

PHASES = lifecycle.PHASES
NOISY = 1.3  # slowest / fastest repeat above which a median is flagged


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def run_heat(python: Path, shape: str, count: int, mode: str, database: str, timeout_s: float) -> dict:
    command = [str(python), "-W", "ignore", str(BENCH / "heat_runner.py"), shape, str(count), "--mode", mode, "--database", database]
    try:
        output = subprocess.run(command, capture_output=True, text=True, check=False, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"phases": {}, "error": f"timed out after {timeout_s:.0f} s"}
    lines = output.stdout.strip().splitlines()
    if output.returncode != 0 or not lines:
        tail = (output.stderr.strip().splitlines() or ["no output"])[-1]
        return {"phases": {}, "error": f"exit {output.returncode}: {tail}"}
    return json.loads(lines[-1])


def summarise(runs: list[dict]) -> dict:
    """Medians per phase over the repeats, the spread, and the first error."""
    if any("unsupported" in run for run in runs):
        return {"unsupported": runs[0]["unsupported"]}
    summary: dict = {"repeats": len(runs), "phases": {}, "error": next((run["error"] for run in runs if run.get("error")), None)}
    for phase in PHASES:
        measured = [run["phases"][phase] for run in runs if phase in run.get("phases", {})]
        if len(measured) != len(runs):
            continue  # a repeat failed before this phase: no honest median
        seconds = [m["seconds"] for m in measured]
        summary["phases"][phase] = {
            "seconds": statistics.median(seconds),
            "peak_rss_mib": statistics.median(m["peak_rss_mib"] for m in measured),
            "spread": max(seconds) / min(seconds) if min(seconds) > 0 else 1.0,
        }
    baselines = [run["baseline_rss_mib"] for run in runs if "baseline_rss_mib" in run]
    if baselines:
        summary["baseline_rss_mib"] = statistics.median(baselines)
    return summary


def plan(args: argparse.Namespace) -> list[tuple[str, int, str]]:
    """(shape, N, mode) rows in the order they are run and printed."""
    rows = []
    for shape in args.shapes:
        for count in args.sizes:
            if "fast" in args.modes:
                rows.append((shape, count, "fast"))
            if "production" in args.modes and shape in args.production_shapes and count in args.production_sizes:
                rows.append((shape, count, "production"))
    return rows


def repeats_for(args: argparse.Namespace, count: int, mode: str) -> int:
    if mode == "production":
        return args.production_repeats
    return args.repeats if count <= args.short_max else args.long_repeats


def measure(args: argparse.Namespace, results: list[dict], on_row) -> None:
    """Appends one row per (shape, N, mode) to ``results``, calling ``on_row`` after each
    so a long run that is interrupted keeps what it measured."""
    heat_python = None
    if not args.no_heat:
        heat_python = heat_env.ensure(log=log)
    stoker_cache: dict[tuple[str, int], dict] = {}
    for shape, count, mode in plan(args):
        started = time.time()
        row = {"shape": shape, "count": count, "mode": mode}
        key = (shape, count)
        if key not in stoker_cache:
            repeats = repeats_for(args, count, "fast")
            runs = []
            for index in range(repeats):
                log(f"stoker {shape} N={count} run {index + 1}/{repeats}")
                runs.append(lifecycle.run_child(shape, count))
                if "unsupported" in runs[-1]:
                    break
            stoker_cache[key] = summarise(runs)
        row["stoker"] = stoker_cache[key]
        if heat_python is None or count > args.heat_max:
            row["heat"] = {"skipped": "not run" if heat_python is None else f"N > {args.heat_max}"}
        else:
            repeats = repeats_for(args, count, mode)
            runs = []
            for index in range(repeats):
                log(f"heat   {shape} N={count} {mode} run {index + 1}/{repeats}")
                runs.append(run_heat(heat_python, shape, count, mode, args.heat_database, args.timeout))
            row["heat"] = summarise(runs)
        row["elapsed_s"] = time.time() - started
        results.append(row)
        on_row()


def _cell(summary: dict, phase: str) -> tuple[str, str, float | None]:
    if "unsupported" in summary:
        return "n/a", "", None  # the reason is in the notes
    if "skipped" in summary:
        return "-", "-", None
    measured = summary["phases"].get(phase)
    if measured is None:
        return "FAILED", "", None
    return f"{measured['seconds']:.3f}", f"{measured['peak_rss_mib']:.0f}", measured["seconds"]


def _noisy(summary: dict, phase: str, engine: str) -> list[str]:
    measured = summary.get("phases", {}).get(phase)
    if measured and measured["spread"] > NOISY:
        return [f"{engine} noisy x{measured['spread']:.2f}"]
    return []


def table(results: list[dict]) -> str:
    header = ("shape", "N", "mode", "phase", "stoker s", "stoker MiB", "heat s", "heat MiB", "heat/stoker", "notes")
    lines = []
    failures = {}
    for row in results:
        for position, phase in enumerate(PHASES):
            stoker_s, stoker_mib, stoker_value = _cell(row["stoker"], phase)
            heat_s, heat_mib, heat_value = _cell(row["heat"], phase)
            ratio = f"{heat_value / stoker_value:.1f}x" if heat_value and stoker_value else "-"
            notes = _noisy(row["stoker"], phase, "stoker") + _noisy(row["heat"], phase, "heat")
            if position == 0:
                notes += [f"{engine}: {row[engine]['unsupported']}" for engine in ("stoker", "heat") if "unsupported" in row[engine]]
            lines.append((row["shape"], str(row["count"]), row["mode"], phase, stoker_s, stoker_mib, heat_s, heat_mib, ratio, "; ".join(notes)))
        if row["stoker"].get("error"):
            failures[f"stoker {row['shape']} N={row['count']}"] = row["stoker"]["error"]
        if row["heat"].get("error"):
            failures[f"heat {row['shape']} N={row['count']} {row['mode']}"] = row["heat"]["error"]
    widths = [max(len(header[i]), *(len(line[i]) for line in lines)) for i in range(len(header))]
    right = {1, 4, 5, 6, 7, 8}

    def render(cells) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    out = [render(header), render(["-" * w for w in widths])] + [render(line) for line in lines]
    if failures:
        out += ["", "Failures (the failed phase and the ones after it show FAILED):"]
        out += [f"  {where}: {error}" for where, error in failures.items()]
    return "\n".join(out)


def baselines(results: list[dict]) -> str:
    parts = []
    for engine in ("stoker", "heat"):
        values = [row[engine]["baseline_rss_mib"] for row in results if "baseline_rss_mib" in row[engine]]
        if values:
            parts.append(f"{engine} {statistics.median(values):.0f} MiB")
    return "RSS before the first phase (imports and set-up, median): " + ", ".join(parts) if parts else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="+", choices=shapes.SHAPES, default=list(shapes.SHAPES))
    parser.add_argument("--sizes", nargs="+", type=int, default=[10, 100, 1000, 10000, 100000])
    parser.add_argument("--modes", nargs="+", choices=["fast", "production"], default=["fast", "production"])
    parser.add_argument("--quick", action="store_true", help="N = 10, 100 only, and production mode at N = 10 only")
    parser.add_argument("--heat-max", type=int, default=1000, help="largest N Heat is run at (default 1000)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of a short run (N <= --short-max); default 3")
    parser.add_argument("--long-repeats", type=int, default=1, help="repeats of a longer run; default 1")
    parser.add_argument("--short-max", type=int, default=100)
    parser.add_argument("--production-shapes", nargs="+", choices=shapes.SHAPES, default=["chain", "fan"])
    parser.add_argument("--production-sizes", nargs="+", type=int, default=[10, 100])
    parser.add_argument("--production-repeats", type=int, default=1, help="the sleeps dominate, so 1 by default")
    parser.add_argument("--heat-database", choices=["file", "memory"], default="file")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds one run may take")
    parser.add_argument("--no-heat", action="store_true", help="stoker only")
    parser.add_argument("--results", type=Path, default=BENCH / "results", help="directory for the raw JSON")
    parser.add_argument("--table", type=Path, help="print the table of a saved raw JSON file and exit")
    args = parser.parse_args()
    if args.quick:
        args.sizes = [size for size in args.sizes if size <= 100]
        args.production_sizes = [10]

    if args.table:
        saved = json.loads(args.table.read_text())
        print(report(saved["results"], saved["elapsed_s"], saved["machine"], saved.get("heat_database", "file")))
        return
    machine = f"{os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform(terse=True)}"
    args.results.mkdir(parents=True, exist_ok=True)
    path = args.results / f"compare-{time.strftime('%Y%m%d-%H%M%S')}.json"
    log(f"raw results go to {path}")
    started = time.time()
    results: list[dict] = []

    def save() -> None:
        raw = {"machine": machine, "heat_database": args.heat_database, "elapsed_s": time.time() - started, "results": results}
        path.write_text(json.dumps(raw, indent=1))

    try:
        measure(args, results, save)
    except KeyboardInterrupt:
        log("interrupted: the table has the rows finished so far")
    save()
    print(report(results, time.time() - started, machine, args.heat_database))
    print(f"Raw results: {path}")


def report(results: list[dict], elapsed_s: float, machine: str, heat_database: str) -> str:
    return "\n".join(
        [
            f"stoker vs OpenStack Heat 27.0.1 (Heat engine in-process, legacy path, SQLite {heat_database}); {machine}",
            "seconds: median wall time of the phase; MiB: median peak RSS of the process at the end of the phase;",
            f"heat/stoker: ratio of the seconds; noisy: slowest/fastest repeat > {NOISY}",
            "",
            table(results),
            "",
            baselines(results),
            f"Whole comparison: {elapsed_s / 60:.1f} min",
        ]
    )


if __name__ == "__main__":
    main()
