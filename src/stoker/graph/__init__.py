"""A generic dependency graph and its concurrent walk. No domain knowledge, no I/O."""

from stoker.graph.dag import CycleError, Graph
from stoker.graph.walk import WalkOutcome, walk

__all__ = ["CycleError", "Graph", "WalkOutcome", "walk"]
