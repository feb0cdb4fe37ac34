"""Benchmark: template capabilities over a tree of N candidate templates.

N candidate templates implement N / 10 resource types, ten candidates each (one per
deployment tool); an environment maps every type to its list of candidates and requires
one tool. Timed, each from a cold cache (every template parsed again) and then warm:

* resolve   choose the candidate of every list by requires (``capabilities.choose``)
* get_class the same through the resource registry, as the engine asks for a resource's
            class (``ResourceRegistry.get_class``): this adds loading each chosen
            template whole and building its resource class (template resources' own cost)
* summary   both forms of ``template capabilities`` over all N templates, with the
            environment (``describe_templates``: tags, types, resolutions)
* find      ``capabilities find -c resource_type=... -c deployment=...`` over all N

The target is well under a second for N = 1000 on the 2-core machine.

    .venv/bin/python bench/capabilities.py             # N = 1000
    .venv/bin/python bench/capabilities.py 100 1000 5000
"""

from __future__ import annotations

import argparse
import time

from stoker.environment import capabilities
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry
from stoker.resources import builtin_mapping

TOOLS = ("puppet", "docker", "ansible", "chef", "salt", "shell", "kolla", "juju", "helm", "none")

CANDIDATE = """\
heat_template_version: 2015-10-15
description: Role {role} configured by {tool}.
capabilities:
  deployment: {tool}
  resource_type: OS::Bench::Role{role}
  tier: {tier}
parameters:
  node_name: {{type: string, default: node}}
resources:
  config:
    type: OS::Heat::Value
    properties:
      value: {{str_replace: {{template: "NODE by {tool}", params: {{NODE: {{get_param: node_name}}}}}}}}
outputs:
  node: {{value: {{get_attr: [config, value]}}}}
"""


def tree(count: int) -> tuple[dict[str, str], Environment]:
    files: dict[str, str] = {}
    registry: dict[str, list[str]] = {}
    for index in range(count):
        role, tool = divmod(index, len(TOOLS))
        name = f"{TOOLS[tool]}/role{role}.yaml"
        files[name] = CANDIDATE.format(role=role, tool=TOOLS[tool], tier=role % 3)
        registry.setdefault(f"OS::Bench::Role{role}", []).append(name)
    return files, Environment(resource_registry=registry, requires={"deployment": "docker"})


def timed(action) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def run(count: int, repeats: int = 3) -> dict[str, float]:
    files, environment = tree(count)
    registry = ResourceRegistry()
    registry.register_mapping(builtin_mapping(), "builtin")
    aliases = environment.type_aliases()
    types = list(environment.resource_registry)

    def resolve() -> int:
        chosen = {capabilities.choose(type_name, environment.resource_registry[type_name], environment.requires, files.get).chosen for type_name in types}
        assert all(name.startswith("docker/") for name in chosen), chosen
        return len(chosen)

    def get_class() -> int:
        chosen = {registry.get_class(type_name, aliases, files).template_name for type_name in types}
        assert all(name.startswith("docker/") for name in chosen), chosen
        return len(chosen)

    def summary() -> dict:
        result = capabilities.describe_templates(files, list(files), environment)
        assert len(result["resource_types"]) == len(types) and len(result["resolutions"]) == len(types)
        return result

    def find() -> list[str]:
        matched, _ = capabilities.find(files, [("resource_type", "OS::Bench::Role0"), ("deployment", "docker")])
        assert matched == ["docker/role0.yaml"], matched
        return matched

    timings = {}
    for label, action in (("resolve", resolve), ("get_class", get_class), ("summary", summary), ("find", find)):
        cold, warm = [], []
        for _ in range(repeats):
            capabilities._DECLARED.clear()  # cold: every template parsed again
            cold.append(timed(action)[0])
            warm.append(timed(action)[0])
        # The fastest of the repeats: the machine's other work only ever adds time.
        timings[f"{label} cold"], timings[f"{label} warm"] = min(cold), min(warm)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[1000], help="numbers of candidate templates")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measure; the fastest is shown")
    arguments = parser.parse_args()
    rows = [(size, run(size, arguments.repeats)) for size in arguments.sizes]
    columns = list(rows[0][1])
    print(f"{'N':>6}  " + "  ".join(f"{column:>14}" for column in columns) + "   (seconds, fastest of the repeats)")
    for size, timings in rows:
        print(f"{size:>6}  " + "  ".join(f"{timings[column]:>14.3f}" for column in columns))


if __name__ == "__main__":
    main()
