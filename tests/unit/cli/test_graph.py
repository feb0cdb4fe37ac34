"""``stoker stack graph``'s renderers on resource bodies in the API's shape: DOT that
Graphviz's real ``dot`` renders (where installed) and a Mermaid flowchart, every name a
quoted label, nested stacks as clusters, an empty nested stack drawn too."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from stoker.cli.graph import StackGraph, to_dot, to_mermaid

ODD = 'a "b" \\N <c> #d;\nnext'


def body(
    name: str,
    required_by: list[str],
    status: str = "CREATE_COMPLETE",
    resource_type: str = "OS::Heat::None",
) -> dict:
    return {
        "resource_name": name,
        "resource_type": resource_type,
        "resource_status": status,
        "required_by": required_by,
    }


def sample() -> StackGraph:
    child = StackGraph("web-group-x", "c1", [body("0", []), body("1", ["0"], "CREATE_FAILED")])
    empty = StackGraph("web-empty-y", "c2", [])
    top = StackGraph(
        "web", "s1",
        [body(ODD, ["group"]), body("group", [], "UPDATE_IN_PROGRESS", "OS::Heat::ResourceGroup"), body("empty", [], "INIT_COMPLETE", "e.yaml")],
        {"group": child, "empty": empty},
    )  # fmt: skip
    return top


def render(text: str) -> str | None:
    if shutil.which("dot") is None:
        return None
    rendered = subprocess.run(
        ["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60
    )
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    return rendered.stdout


def test_graph_dot_escapes_names_and_draws_clusters():
    text = to_dot(sample())
    # The odd name: its quote, backslash and line break escaped inside one quoted label.
    assert '[label="a \\"b\\" \\\\N <c> #d;\\nnext\\nOS::Heat::None\\nCREATE_COMPLETE"' in text
    assert "n2 -> n1;" in text  # group depends on the odd one (its required_by)
    assert text.count("subgraph cluster_") == 2 and 'label="(no resources)"' in text
    assert re.search(r"n\d+ -> empty_\d+ \[lhead=cluster_\d+", text)
    assert 'fillcolor="#f8d0d0"' in text and 'fillcolor="#fdf0c2"' in text  # failed, in progress
    svg = render(text)
    if svg is None:
        pytest.skip("Graphviz's dot is not installed: the output was checked, not rendered")
    assert "a &quot;b&quot; \\N &lt;c&gt; #d;" in svg and svg.count('class="cluster"') == 2


def test_graph_mermaid_labels_never_leave_their_quotes():
    text = to_mermaid(sample())
    for line in text.splitlines()[4:]:
        assert line.count('"') in (0, 2), line
    assert (
        'n1["a #quot;b#quot; \\N #60;c#62; #35;d; next<br/>OS::Heat::None<br/>CREATE_COMPLETE"]'
        in text
    )
    assert "n2 --> n1" in text and "n2 -.-> s2" in text and "n3 -.-> s1" in text
    assert text.count("subgraph ") == 2 and text.count("\n  end") + text.count("\n    end") == 2
    assert "classDef failed" in text and re.search(r"class n\d+ failed", text)
