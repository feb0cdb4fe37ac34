"""Benchmark: a big stack tree modelled on TripleO's composition, on stoker's embedded default.

The tree (``tree_files``): a root stack with

* ``nodes``: one OS::Heat::ResourceGroup of N members, each a template resource
  (``node.yaml``), a nested stack of 22 resources with get_attr between them, as a
  TripleO role's per-node stack has: a config value, a chain of 19 OS::Heat::Value each
  reading the previous one, an OS::Heat::RandomString and a value read from a role
  parameter map by the node's index;
* ``endpoint_map_0`` .. ``endpoint_map_29``: 30 nested stacks of only outputs (20 each),
  as TripleO's endpoint map had; every node reads one of them.

At N = 1000 that is 22,000 resources in 1000 nested stacks, plus the group, its 1000
members, the 30 maps and the maps' nested stacks: 1032 stacks and 23,031 resources.

Phases, in one fresh process per N (so peak RSS is the run's own): create; update, where
the role parameter map gives node 7 a new value (every node's stack is checked, one
resource of one node changes, as a TripleO parameter change touching one node); delete.
Each phase prints its wall time, the process's CPU time (user + system, all threads:
the engine's own work, which a busy machine does not inflate as it does wall time) and
the peak RSS reached by its end. The goal (issue 34): the 22,000-resource tree created in
under a minute of stoker's CPU (Heat's people reported ~10 minutes of Heat's own processing
for such a tree).

    .venv/bin/python bench/trees.py              # N = 10, 100, 1000
    .venv/bin/python bench/trees.py 1000         # chosen sizes
    .venv/bin/python bench/trees.py --child 100  # one run, as JSON

Heat and stoker with workers on PostgreSQL are not run by this script yet.
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

PHASES = ("create", "update", "delete")
CHAIN = 19
ENDPOINT_MAPS = 30
ENDPOINTS = 20
# The node whose value the update changes.
TOUCHED = 7


def root_template(count: int) -> str:
    lines = [
        "heat_template_version: 2021-04-16",
        "parameters:",
        "  role_values: {type: json, default: {}}",
        "resources:",
    ]
    for index in range(ENDPOINT_MAPS):
        lines += [
            f"  endpoint_map_{index}:",
            "    type: endpoint_map.yaml",
            f"    properties: {{index: '{index}'}}",
        ]
    lines += [
        "  nodes:",
        "    type: OS::Heat::ResourceGroup",
        "    properties:",
        f"      count: {count}",
        "      resource_def:",
        "        type: node.yaml",
        "        properties:",
        "          index: '%index%'",
        "          role_values: {get_param: role_values}",
        "          endpoints: {get_attr: [endpoint_map_0, endpoints]}",
        "outputs:",
        "  first_node:",
        "    value: {get_attr: [nodes, resource.0.name]}",
    ]
    return "\n".join(lines) + "\n"


def endpoint_map() -> str:
    lines = [
        "heat_template_version: 2021-04-16",
        "parameters:",
        "  index: {type: string}",
        "outputs:",
        "  endpoints:",
        "    value:",
    ]
    lines += [
        f"      service_{n}: {{str_replace: {{template: 'http://service-{n}.INDEX.example:80{n:02d}/', params: {{INDEX: {{get_param: index}}}}}}}}"
        for n in range(ENDPOINTS)
    ]
    for n in range(ENDPOINTS):
        lines += [
            f"  url_{n}:",
            f"    value: {{str_replace: {{template: 'http://service-{n}.INDEX.example/', params: {{INDEX: {{get_param: index}}}}}}}}",
        ]
    return "\n".join(lines) + "\n"


def node() -> str:
    lines = [
        "heat_template_version: 2021-04-16",
        "parameters:",
        "  index: {type: string}",
        "  role_values: {type: json, default: {}}",
        "  endpoints: {type: json, default: {}}",
        "resources:",
        "  config:",
        "    type: OS::Heat::Value",
        "    properties:",
        "      value: {str_replace: {template: 'node-INDEX at ENDPOINT', params: {INDEX: {get_param: index}, ENDPOINT: {get_param: [endpoints, service_0]}}}}",
    ]
    previous = "config"
    for n in range(CHAIN):
        lines += [
            f"  step_{n}:",
            "    type: OS::Heat::Value",
            "    properties:",
            f"      value: {{list_join: ['/', [{{get_attr: [{previous}, value]}}, 'step-{n}']]}}",
        ]
        previous = f"step_{n}"
    lines += [
        "  secret:",
        "    type: OS::Heat::RandomString",
        "    properties: {length: 16}",
        "  role_value:",
        "    type: OS::Heat::Value",
        "    properties:",
        "      value: {get_param: [role_values, {get_param: index}]}",
        "outputs:",
        "  name:",
        f"    value: {{get_attr: [{previous}, value]}}",
    ]
    return "\n".join(lines) + "\n"


def resource_counts(count: int) -> tuple[int, int]:
    """(stacks, resources) of a complete tree of ``count`` nodes."""
    stacks = 1 + ENDPOINT_MAPS + 1 + count
    resources = ENDPOINT_MAPS + 1 + count + count * (CHAIN + 3)
    return stacks, resources


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(count: int) -> dict:
    """Runs inside the child process: the three phases, each checked after it (untimed)."""
    from stoker.service import Service, Source
    from stoker.settings import Settings

    files = {"node.yaml": node(), "endpoint_map.yaml": endpoint_map()}
    results: dict = {
        "count": count,
        "baseline_rss_mib": peak_rss_mib(),
        "phases": {},
        "error": None,
    }
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(
            database_url=f"sqlite:///{Path(directory) / 'bench.sqlite'}",
            max_resources_per_stack=-1,
            max_template_bytes=1 << 30,
        )
        service = Service(settings)
        template = Source(root_template(count), "tree.yaml")
        actions = {
            "create": lambda: service.create_stack("tree", template, files=files),
            "update": lambda: service.update_stack(
                "tree", template, files=files, parameters={"role_values": {str(TOUCHED): "changed"}}
            ),
            "delete": lambda: service.delete_stack("tree"),
        }
        for phase in PHASES:
            wall, cpu = time.perf_counter(), cpu_seconds()
            try:
                stack = actions[phase]()
            except Exception as error:  # noqa: BLE001 - reported, and the run ends
                results["error"] = f"{phase}: {type(error).__name__}: {error}"
                break
            results["phases"][phase] = {
                "seconds": time.perf_counter() - wall,
                "cpu_seconds": cpu_seconds() - cpu,
                "peak_rss_mib": peak_rss_mib(),
            }
            expected = f"{phase.upper()}_COMPLETE"
            if stack.state != expected:
                results["error"] = f"{phase}: the stack is {stack.state}: {stack.status_reason}"
                break
            if phase != "delete":
                problem = check_tree(service, count)
                if problem:
                    results["error"] = f"{phase}: {problem}"
                    break
        service.close()
    return results


def check_tree(service, count: int) -> str | None:
    """What is wrong with the stored tree after a create or update, if anything: as many
    live stacks and resources as the tree holds, every one COMPLETE."""
    import sqlalchemy as sa

    from stoker.store import tables

    stacks, resources = resource_counts(count)
    with service.store.engine.connect() as connection:
        live = connection.execute(
            sa.select(tables.stacks.c.id, tables.stacks.c.status).where(
                tables.stacks.c.deleted_at.is_(None)
            )
        ).all()
        ids = [row.id for row in live]
        rows = (
            connection.execute(
                sa.select(tables.resources.c.status).where(tables.resources.c.stack_id.in_(ids))
            ).all()
            if ids
            else []
        )
    if len(live) != stacks or len(rows) != resources:
        return f"{len(live)} stacks and {len(rows)} resources, {stacks} and {resources} expected"
    incomplete = [row.status for row in [*live, *rows] if row.status != "COMPLETE"]
    if incomplete:
        return f"{len(incomplete)} stacks or resources not COMPLETE: {sorted(set(incomplete))}"
    return None


def run_child(count: int) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", str(count)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = output.stdout.strip().splitlines()
    if output.returncode != 0 or not lines:
        tail = (output.stderr.strip().splitlines() or ["no output"])[-1]
        return {"count": count, "phases": {}, "error": f"exit {output.returncode}: {tail}"}
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10, 100, 1000])
    parser.add_argument(
        "--child", action="store_true", help="run one size in this process, print JSON"
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.sizes[0])))
        return
    print(f"{'nodes':>6} {'stacks':>7} {'resources':>9}  " + "  ".join(f"{p:>26}" for p in PHASES))
    print(" " * 26 + "  ".join(f"{'wall s  cpu s  peak MiB':>26}" for _ in PHASES))
    for count in args.sizes:
        result = run_child(count)
        stacks, resources = resource_counts(count)
        cells = []
        for phase in PHASES:
            measured = result["phases"].get(phase)
            cells.append(
                f"{measured['seconds']:>8.1f} {measured['cpu_seconds']:>6.1f} {measured['peak_rss_mib']:>9.0f}"
                if measured
                else f"{'-':>26}"
            )
        print(
            f"{count:>6} {stacks:>7} {resources:>9}  " + "  ".join(f"{cell:>26}" for cell in cells)
        )
        if result.get("error"):
            print(f"       failed: {result['error']}")


if __name__ == "__main__":
    main()
