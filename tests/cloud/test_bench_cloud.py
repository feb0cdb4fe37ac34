"""bench/cloud.py, smoke-tested at N = 1 on the session's test cloud: both sides create
and delete a server on its own port, and each phase's API calls are counted from the
services' access logs (the numbers themselves belong to the benchmark, not here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "bench" / "cloud.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("bench_cloud", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the module runs.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_cloud_benchmark_creates_and_deletes_one_server_on_each_side(openstack_cloud):
    benchmark = load_benchmark()
    printed: list[str] = []
    admin = openstack_cloud.connect("admin")

    results = benchmark.run(openstack_cloud, [1], list(benchmark.SIDES), out=printed.append)

    by_side = {result.side: result for result in results}
    assert set(by_side) == {"floor", "stoker"}
    for side, result in by_side.items():
        assert result.error is None, f"{side}: {result.error}"
        if result.skipped:
            assert result.skipped == "OS::Nova::Server missing"
            continue
        assert set(result.phases) == {"create", "delete"}
        create, delete = result.phases["create"], result.phases["delete"]
        # Both sides send at least the network's, subnet's and port's POST and DELETE and
        # the server's; the access logs saw those and more (Nova's own calls).
        assert create.sent["neutron"] >= 3 and create.sent["nova"] >= 1, (side, create.sent)
        assert delete.sent["neutron"] >= 3 and delete.sent["nova"] >= 1, (side, delete.sent)
        assert create.calls["neutron"] >= create.sent["neutron"], (side, create.calls)
        assert delete.calls["nova"] >= delete.sent["nova"], (side, delete.calls)
        assert create.seconds > 0 and delete.seconds > 0
    # The floor sends exactly that to Neutron: no lookups, no reads.
    floor = by_side["floor"].phases
    assert (floor["create"].sent["neutron"], floor["delete"].sent["neutron"]) == (3, 3)
    assert any(line.startswith("  1  floor  create") for line in printed)
    assert any("Heat 27.0.1" in line for line in printed)
    # The run had a project of its own, deleted afterwards with all that was in it.
    (project_id,) = {result.project_id for result in results}
    assert admin.identity.find_project(project_id) is None
    # Filtered here: Neutron makes a project's default group when asked for its groups.
    for listing in (admin.network.networks, admin.network.ports, admin.network.security_groups):
        assert [item.id for item in listing() if item.project_id == project_id] == []
    assert list(admin.compute.servers(all_projects=True, project_id=project_id)) == []
