"""``stoker stack graph`` as a user runs it, embedded and against a real ``stoker serve``
(``cli_backend``): the DOT it prints is rendered by Graphviz's real ``dot`` where it is
installed, and both formats are read back to the nodes, edges and clusters they draw."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.acceptance.conftest import cli_invoker, environment_of

# An odd name (quotes, markup, a backslash, '#') that must come out as a label only.
ODD = 'odd "name" <b>#1</b> \\n'

TEMPLATE = f"""\
heat_template_version: 2021-04-16
resources:
  word:
    type: OS::Heat::RandomString
    properties: {{length: 8}}
  '{ODD.replace("'", "''")}':
    type: OS::Heat::TestResource
    properties: {{value: {{get_attr: [word, value]}}}}
  config:
    type: OS::Heat::Value
    properties: {{value: {{get_resource: word}}}}
  group:
    type: OS::Heat::ResourceGroup
    depends_on: [config]
    properties:
      count: 2
      resource_def:
        type: member.yaml
"""

MEMBER = """\
heat_template_version: 2021-04-16
resources:
  leaf:
    type: OS::Heat::TestResource
    properties: {value: leaf}
  after:
    type: OS::Heat::None
    depends_on: leaf
"""

# dependent -> dependency, by resource name, of the top stack and of each member's.
TOP_EDGES = {(ODD, "word"), ("config", "word"), ("group", "config")}
MEMBER_EDGES = {("after", "leaf")}


@pytest.fixture
def stoker(tmp_path, cli_backend):
    env = environment_of(cli_backend)
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "member.yaml").write_text(MEMBER)

    invoke = cli_invoker(env, tmp_path)

    invoke("stack", "create", "web", "-t", "t.yaml", "--wait")
    return invoke


def dot_graph(text: str) -> tuple[dict[str, list[str]], set[tuple[str, str]], list[str]]:
    """Nodes (id -> label lines), plain edges (ids) and cluster labels of DOT output."""
    nodes, edges, clusters = {}, set(), []
    for line in text.splitlines():
        if found := re.fullmatch(
            r'\s*(n\d+) \[label="((?:[^"\\]|\\.)*)", fillcolor="[^"]*"\];', line
        ):
            unescaped = re.sub(
                r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), found.group(2)
            )
            nodes[found.group(1)] = unescaped.split("\n")
        elif found := re.fullmatch(r"\s*(n\d+) -> (n\d+);", line):
            edges.add((found.group(1), found.group(2)))
        elif found := re.fullmatch(r'\s*label="((?:[^"\\]|\\.)*)";', line):
            clusters.append(found.group(1))
    return nodes, edges, clusters


def named(nodes: dict[str, list[str]], edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(nodes[a][0], nodes[b][0]) for a, b in edges}


def test_stack_graph_in_dot_and_mermaid_nested_or_not(stoker):
    # One stack for every check: making it is most of the time this takes.
    check_dot(stoker("stack", "graph", "web").stdout)
    check_nested_dot(stoker("stack", "graph", "web", "--nested", "-f", "dot").stdout)
    check_mermaid(stoker("stack", "graph", "web", "--nested", "-f", "mermaid").stdout)
    result = stoker("stack", "graph", "nowhere", check=False)
    assert result.returncode == 1 and "nowhere" in result.stderr and result.stdout == "", (
        result.stderr
    )


def render(text: str) -> str | None:
    """The SVG Graphviz's real ``dot`` makes of ``text``; None where it is not installed."""
    if shutil.which("dot") is None:
        return None
    rendered = subprocess.run(
        ["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60
    )
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    return rendered.stdout


def check_dot(text: str) -> None:
    nodes, edges, clusters = dot_graph(text)
    assert sorted(label[0] for label in nodes.values()) == sorted([ODD, "word", "config", "group"])
    assert {label[0]: label[1:] for label in nodes.values()}["word"] == [
        "OS::Heat::RandomString",
        "CREATE_COMPLETE",
    ]
    assert named(nodes, edges) == TOP_EDGES
    assert clusters == ["stack web"] and "subgraph" not in text
    svg = render(text)
    assert svg is None or ("&lt;b&gt;#1&lt;/b&gt;" in svg and "CREATE_COMPLETE" in svg)


def check_nested_dot(text: str) -> None:
    """Each nested stack a cluster, inside its parent's, owned by its resource."""
    nodes, edges, clusters = dot_graph(text)
    labels = [label[0] for label in nodes.values()]
    assert sorted(labels) == sorted(
        [ODD, "word", "config", "group", "0", "1", "leaf", "leaf", "after", "after"]
    )
    assert named(nodes, edges) == TOP_EDGES | MEMBER_EDGES
    # The group's stack, and each member's inside it, owned by their resources.
    assert clusters[0] == "stack web"
    assert [label.split(":")[0] for label in clusters[1:]] == ["group", "0", "1"]
    assert re.search(r"subgraph cluster_1 \{(.|\n)*subgraph cluster_2 \{", text)
    owners = re.findall(r"(n\d+) -> n\d+ \[lhead=(cluster_\d+), style=dashed", text)
    assert sorted((nodes[owner][0], cluster) for owner, cluster in owners) == [
        ("0", "cluster_2"),
        ("1", "cluster_3"),
        ("group", "cluster_1"),
    ]
    svg = render(text)
    assert svg is None or svg.count('class="cluster"') == 3


def check_mermaid(text: str) -> None:
    lines = text.splitlines()
    assert lines[:4] == ["---", 'title: "stack web"', "---", "flowchart TB"]
    nodes = dict(re.findall(r'^\s*(n\d+)\["([^"]*)"\]$', text, re.M))
    edges = set(re.findall(r"^\s*(n\d+) --> (n\d+)$", text, re.M))
    owners = re.findall(r"^\s*(n\d+) -.-> (s\d+)$", text, re.M)
    subgraphs = re.findall(r'^\s*subgraph (s\d+)\["([^"]*)"\]$', text, re.M)
    # Every line is one of the statements above, so no label broke out of its quotes.
    statements = (
        len(nodes)
        + len(edges)
        + len(owners)
        + len(subgraphs)
        + text.count("\n  classDef ")
        + text.count("\n  class ")
    )
    assert statements + sum(line.strip() == "end" for line in lines) == len(lines) - 4, text
    assert len(subgraphs) == 3 and sum(line.strip() == "end" for line in lines) == 3
    names = {node: label.split("<br/>")[0] for node, label in nodes.items()}
    assert "odd #quot;name#quot; #60;b#62;#35;1#60;/b#62; \\n" in names.values()
    assert {(names[a], names[b]) for a, b in edges} == {
        (_mermaid(a), _mermaid(b)) for a, b in TOP_EDGES | MEMBER_EDGES
    }
    assert sorted(names[owner] for owner, _ in owners) == ["0", "1", "group"]


def _mermaid(name: str) -> str:
    return (
        name.replace("#", "#35;").replace('"', "#quot;").replace("<", "#60;").replace(">", "#62;")
    )
