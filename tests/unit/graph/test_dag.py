"""The generic DAG and its concurrent walk."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stoker.graph import CycleError, Graph, walk


def test_graph_golden_text():
    graph = Graph.from_requirements({"web": ["db", "net"], "db": ["net"], "net": []})
    assert graph.to_text() == "db: net\nnet:\nweb: db, net\n"
    assert graph.reversed().to_text() == "db: web\nnet: db, web\nweb:\n"


def test_graph_cycle_is_named_in_order():
    graph = Graph.from_requirements({"a": ["b"], "b": ["c"], "c": ["a"], "d": []})
    with pytest.raises(CycleError) as caught:
        graph.check_acyclic()
    assert caught.value.cycle == ["a", "b", "c", "a"]
    assert str(caught.value) == "Circular Dependency Found: a -> b -> c -> a"


def test_graph_long_chain_has_no_recursion_limit():
    graph = Graph.from_requirements({i: [i - 1] if i else [] for i in range(100_000)})
    assert graph.find_cycle() is None
    assert graph.topological_order()[:3] == [0, 1, 2]


@st.composite
def dags(draw):
    size = draw(st.integers(min_value=1, max_value=30))
    requirements = {}
    for node in range(size):
        requirements[node] = draw(st.sets(st.integers(min_value=0, max_value=node - 1), max_size=4)) if node else set()
    return requirements


@given(dags())
@settings(max_examples=60, deadline=None)
def test_topological_order_respects_every_edge(requirements):
    order = Graph.from_requirements(requirements).topological_order()
    position = {node: index for index, node in enumerate(order)}
    assert sorted(order) == sorted(requirements)
    for node, needs in requirements.items():
        assert all(position[need] < position[node] for need in needs)


@given(dags(), st.integers(min_value=1, max_value=5))
@settings(max_examples=60, deadline=None)
def test_walk_visits_after_requirements_within_limit(requirements, limit):
    graph = Graph.from_requirements(requirements)
    finished: list[int] = []
    running = 0
    peak = 0

    async def visit(node):
        nonlocal running, peak
        assert all(need in finished for need in requirements[node])
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1
        finished.append(node)

    outcome = asyncio.run(walk(graph, visit, limit=limit))
    assert outcome.ok
    assert sorted(outcome.completed) == sorted(requirements)
    assert peak <= limit


def test_walk_failure_skips_dependents_and_stops_new_work():
    graph = Graph.from_requirements({"a": [], "b": ["a"], "c": ["b"], "x": [], "y": ["x"]})

    async def visit(node):
        if node == "a":
            raise ValueError("boom")
        await asyncio.sleep(0)

    outcome = asyncio.run(walk(graph, visit, limit=10))
    assert list(outcome.failed) == ["a"]
    assert {"b", "c"} <= outcome.skipped
    assert "a" not in outcome.completed


def test_walk_continues_independent_work_when_asked():
    graph = Graph.from_requirements({"a": [], "b": ["a"], "x": [], "y": ["x"]})

    async def visit(node):
        if node == "a":
            raise ValueError("boom")

    outcome = asyncio.run(walk(graph, visit, limit=1, stop_on_failure=False))
    assert set(outcome.completed) == {"x", "y"}
    assert outcome.skipped == {"b"}


def test_walk_cancellation_cancels_nodes_in_flight():
    graph = Graph.from_requirements({"a": [], "b": []})
    cancelled = []

    async def visit(node):
        try:
            await asyncio.sleep(100)
        except asyncio.CancelledError:
            cancelled.append(node)
            raise

    async def scenario():
        task = asyncio.create_task(walk(graph, visit))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert sorted(cancelled) == ["a", "b"]
