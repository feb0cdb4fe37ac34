"""``stoker stack graph NAME -f dot|mermaid``: a stack's resources and their
dependencies as a graph, for Graphviz (``dot -Tsvg``) or a Mermaid flowchart.

Each resource is a node labelled with its name, type and status; an arrow goes from a
resource to each resource it depends on (the ``required_by`` of the resource list,
read from the stack's template as the engine orders its actions). With ``--nested``,
each nested stack (of a template resource, ``OS::Heat::Stack``, a group) is drawn as a
cluster (Mermaid: a subgraph), inside the clusters of the stacks it is nested in, with
a dashed arrow from the resource that owns it. Read through the backend's resource
list, so it draws the same graph embedded and against a server (``--url``).

Nodes are named ``n1``, ``n2``, ... and clusters ``cluster_1``, ... (Mermaid ``s1``),
in the order of the stacks and names, so the output is stable; names appear only in
labels, quoted and escaped, so no name can break the syntax.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import click

from stoker.cli import completion
from stoker.cli.groups import stack
from stoker.cli.invocation import reader_of

# Deeper than any stack nests (a server caps it at its max_nested_depth).
ALL_LEVELS = 100


@dataclass
class StackGraph:
    """One stack's resources (Heat's resource bodies) and its nested stacks' graphs,
    by the name of the resource that owns each."""

    name: str
    id: str
    resources: list[dict[str, Any]] = field(default_factory=list)
    children: dict[str, StackGraph] = field(default_factory=dict)


def gather(backend: Any, name: str, nested: bool) -> StackGraph:
    """The stack's graph, its nested stacks' too with ``nested``."""
    from stoker.cli.backend import link, stack_of_link

    stack_name, stack_id = backend.identify_stack(name)
    bodies = backend.list_resources(stack_id, nested_depth=ALL_LEVELS if nested else 0)
    stacks = {stack_id: StackGraph(stack_name, stack_id)}
    for body in bodies:
        owner = stack_of_link(link(body, "stack")) or (stack_name, stack_id)
        stacks.setdefault(owner[1], StackGraph(*owner)).resources.append(body)
    if nested:
        for graph in list(stacks.values()):
            for body in graph.resources:
                child = stack_of_link(link(body, "nested"))
                if child is not None:
                    graph.children[body["resource_name"]] = stacks.setdefault(
                        child[1], StackGraph(*child)
                    )
    for graph in stacks.values():
        graph.resources.sort(key=lambda body: body["resource_name"])
    return stacks[stack_id]


class _Names:
    """The ids of the output: a node per (stack id, resource name), a cluster per stack."""

    def __init__(self) -> None:
        self.nodes: dict[tuple[str, str], str] = {}
        self.clusters = 0

    def node(self, stack_id: str, resource_name: str) -> str:
        return self.nodes.setdefault((stack_id, resource_name), f"n{len(self.nodes) + 1}")

    def cluster(self) -> int:
        self.clusters += 1
        return self.clusters


def _edges(graph: StackGraph, names: _Names) -> list[tuple[str, str]]:
    """(dependent, dependency) of one stack's resources."""
    present = {body["resource_name"] for body in graph.resources}
    edges = []
    for body in graph.resources:
        for dependent in sorted(body.get("required_by") or ()):
            if dependent in present:
                edges.append(
                    (names.node(graph.id, dependent), names.node(graph.id, body["resource_name"]))
                )
    return edges


def _status_class(status: str) -> str:
    for suffix, kind in (
        ("_COMPLETE", "complete"),
        ("_FAILED", "failed"),
        ("_IN_PROGRESS", "in_progress"),
    ):
        if status.endswith(suffix):
            return kind
    return "other"


# -- Graphviz -----------------------------------------------------------------------

_DOT_FILL = {
    "complete": "#d9f2d9",
    "failed": "#f8d0d0",
    "in_progress": "#fdf0c2",
    "other": "#eeeeee",
}


def _dot_text(text: str) -> str:
    """A DOT quoted string's content: backslash and quote escaped, line breaks as ``\\n``."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")


def to_dot(graph: StackGraph) -> str:
    names = _Names()
    lines = [
        f'digraph "{_dot_text(graph.name)}" {{',
        "  compound=true;",
        "  rankdir=TB;",
        f'  label="stack {_dot_text(graph.name)}";',
        "  labelloc=t;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    edges: list[str] = []
    _dot_stack(graph, names, lines, edges, "  ")
    lines.extend(edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_stack(
    graph: StackGraph, names: _Names, lines: list[str], edges: list[str], indent: str
) -> None:
    for body in graph.resources:
        status = str(body.get("resource_status") or "")
        label = "\\n".join(
            _dot_text(str(part))
            for part in (body["resource_name"], body.get("resource_type") or "", status)
        )
        lines.append(
            f'{indent}{names.node(graph.id, body["resource_name"])} [label="{label}", fillcolor="{_DOT_FILL[_status_class(status)]}"];'
        )
    edges.extend(
        f"  {dependent} -> {dependency};" for dependent, dependency in _edges(graph, names)
    )
    for owner, child in sorted(graph.children.items()):
        number = names.cluster()
        lines.append(f"{indent}subgraph cluster_{number} {{")
        lines.append(f'{indent}  label="{_dot_text(owner)}: stack {_dot_text(child.name)}";')
        lines.append(f'{indent}  style="dashed,rounded";')
        if not child.resources and not child.children:
            lines.append(
                f'{indent}  empty_{number} [label="(no resources)", shape=plaintext, style=""];'
            )
            first = f"empty_{number}"
        else:
            first = ""
        _dot_stack(child, names, lines, edges, indent + "  ")
        lines.append(f"{indent}}}")
        first = first or _first_node(child, names)
        edges.append(
            f"  {names.node(graph.id, owner)} -> {first} [lhead=cluster_{number}, style=dashed, arrowhead=empty];"
        )


def _first_node(graph: StackGraph, names: _Names) -> str:
    """A node inside the cluster of ``graph`` (a nested stack's, if it has no resource)."""
    if graph.resources:
        return names.node(graph.id, graph.resources[0]["resource_name"])
    return _first_node(next(iter(sorted(graph.children.items())))[1], names)


# -- Mermaid ------------------------------------------------------------------------

_MERMAID_STYLE = {
    "complete": "fill:#d9f2d9",
    "failed": "fill:#f8d0d0",
    "in_progress": "fill:#fdf0c2",
    "other": "fill:#eeeeee",
}


def _mermaid_text(text: str) -> str:
    """A Mermaid quoted label's content: every character that could end the label or be
    read as markup as an entity code (``#quot;``, ``#60;``)."""
    out = []
    for ch in text.replace("\r", ""):
        if ch == '"':
            out.append("#quot;")
        elif ch in "#<>&`":
            out.append(f"#{ord(ch)};")
        elif ch == "\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def to_mermaid(graph: StackGraph) -> str:
    names = _Names()
    lines = ["---", "title: " + json.dumps(f"stack {graph.name}"), "---", "flowchart TB"]
    edges: list[str] = []
    classes: dict[str, list[str]] = {}
    _mermaid_stack(graph, names, lines, edges, classes, "  ")
    lines.extend(edges)
    for kind, style in _MERMAID_STYLE.items():
        if classes.get(kind):
            lines.append(f"  classDef {kind} {style}")
            lines.append(f"  class {','.join(classes[kind])} {kind}")
    return "\n".join(lines) + "\n"


def _mermaid_stack(
    graph: StackGraph,
    names: _Names,
    lines: list[str],
    edges: list[str],
    classes: dict[str, list[str]],
    indent: str,
) -> None:
    for body in graph.resources:
        status = str(body.get("resource_status") or "")
        node = names.node(graph.id, body["resource_name"])
        label = "<br/>".join(
            _mermaid_text(str(part))
            for part in (body["resource_name"], body.get("resource_type") or "", status)
        )
        lines.append(f'{indent}{node}["{label}"]')
        classes.setdefault(_status_class(status), []).append(node)
    edges.extend(
        f"  {dependent} --> {dependency}" for dependent, dependency in _edges(graph, names)
    )
    for owner, child in sorted(graph.children.items()):
        cluster = f"s{names.cluster()}"
        lines.append(
            f'{indent}subgraph {cluster}["{_mermaid_text(owner)}: stack {_mermaid_text(child.name)}"]'
        )
        if not child.resources and not child.children:
            lines.append(f'{indent}  {cluster}_empty["(no resources)"]')
        _mermaid_stack(child, names, lines, edges, classes, indent + "  ")
        lines.append(f"{indent}end")
        edges.append(f"  {names.node(graph.id, owner)} -.-> {cluster}")


RENDERERS = {"dot": to_dot, "mermaid": to_mermaid}


@stack.command("graph")
@click.argument("name", shell_complete=completion.stacks)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(sorted(RENDERERS)),
    default="dot",
    show_default=True,
    help="Graphviz DOT, or a Mermaid flowchart.",
)
@click.option(
    "--nested",
    is_flag=True,
    help="Draw nested stacks as clusters (Mermaid: subgraphs), every level down.",
)
@click.pass_context
def stack_graph(ctx, name, fmt, nested):
    """Print a stack's resources (name, type, status) and their dependencies as a graph:
    an arrow goes from a resource to each one it depends on. Render it with
    'stoker stack graph NAME | dot -Tsvg > NAME.svg', or paste -f mermaid into Markdown."""
    click.echo(RENDERERS[fmt](gather(reader_of(ctx), name, nested)), nl=False)
