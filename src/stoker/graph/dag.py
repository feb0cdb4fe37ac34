"""A directed acyclic graph of hashable nodes: node -> the nodes it requires.

Edges point from a node to its requirements. ``reversed()`` gives the graph for teardown
(a node is removed only after everything that required it). Cycle detection is
iterative so a 100,000-node chain cannot overflow the stack.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Generic, TypeVar

N = TypeVar("N", bound=Hashable)


class CycleError(ValueError):
    """The graph has a cycle; ``cycle`` lists it in order, first node repeated at the end."""

    def __init__(self, cycle: list):
        self.cycle = cycle
        super().__init__("Circular Dependency Found: " + " -> ".join(str(n) for n in cycle))


class Graph(Generic[N]):
    __slots__ = ("_requires",)

    def __init__(self) -> None:
        self._requires: dict[N, set[N]] = {}

    @classmethod
    def from_requirements(cls, requirements: dict[N, Iterable[N]]) -> Graph[N]:
        graph: Graph[N] = cls()
        for node, needs in requirements.items():
            graph.add_node(node)
            for need in needs:
                graph.add_edge(node, need)
        return graph

    def add_node(self, node: N) -> None:
        self._requires.setdefault(node, set())

    def add_edge(self, node: N, requirement: N) -> None:
        """``node`` requires ``requirement`` (both are added if new)."""
        self._requires.setdefault(node, set()).add(requirement)
        self._requires.setdefault(requirement, set())

    def remove_edge(self, node: N, requirement: N) -> None:
        """``node`` no longer requires ``requirement`` (both stay in the graph)."""
        self._requires[node].discard(requirement)

    def __contains__(self, node: object) -> bool:
        return node in self._requires

    def __len__(self) -> int:
        return len(self._requires)

    def __iter__(self) -> Iterator[N]:
        return iter(self._requires)

    def requires(self, node: N) -> set[N]:
        return self._requires[node]

    def required_by(self) -> dict[N, set[N]]:
        """The reverse map: node -> nodes that require it."""
        reverse: dict[N, set[N]] = {node: set() for node in self._requires}
        for node, needs in self._requires.items():
            for need in needs:
                reverse[need].add(node)
        return reverse

    def reversed(self) -> Graph[N]:
        graph: Graph[N] = Graph()
        graph._requires = self.required_by()
        return graph

    def subgraph(self, nodes: Iterable[N]) -> Graph[N]:
        keep = set(nodes)
        graph: Graph[N] = Graph()
        graph._requires = {n: self._requires[n] & keep for n in self._requires if n in keep}
        return graph

    def find_cycle(self) -> list[N] | None:
        """One cycle as a list (first node repeated last), or None."""
        WHITE, GREY, BLACK = 0, 1, 2
        color = dict.fromkeys(self._requires, WHITE)
        for start in self._requires:
            if color[start] != WHITE:
                continue
            stack: list[tuple[N, Iterator[N]]] = [(start, iter(sorted(self._requires[start], key=str)))]
            path = [start]
            color[start] = GREY
            while stack:
                node, children = stack[-1]
                advanced = False
                for child in children:
                    if color[child] == GREY:
                        return path[path.index(child):] + [child]
                    if color[child] == WHITE:
                        color[child] = GREY
                        stack.append((child, iter(sorted(self._requires[child], key=str))))
                        path.append(child)
                        advanced = True
                        break
                if not advanced:
                    color[node] = BLACK
                    stack.pop()
                    path.pop()
        return None

    def check_acyclic(self) -> None:
        cycle = self.find_cycle()
        if cycle:
            raise CycleError(cycle)

    def topological_order(self) -> list[N]:
        """Requirements first. Raises CycleError."""
        remaining = {node: len(needs) for node, needs in self._requires.items()}
        dependents = self.required_by()
        ready = [node for node, count in remaining.items() if count == 0]
        order: list[N] = []
        while ready:
            node = ready.pop()
            order.append(node)
            for dependent in dependents[node]:
                remaining[dependent] -= 1
                if remaining[dependent] == 0:
                    ready.append(dependent)
        if len(order) != len(self._requires):
            self.check_acyclic()
        return order

    def to_text(self) -> str:
        """One line per node, ``node: requirement, ...``, sorted (for golden tests)."""
        lines = []
        for node in sorted(self._requires, key=str):
            needs = ", ".join(sorted(str(n) for n in self._requires[node]))
            lines.append(f"{node}: {needs}" if needs else f"{node}:")
        return "\n".join(lines) + "\n"
