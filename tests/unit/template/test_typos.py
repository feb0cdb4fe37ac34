"""stoker.template.typos: a one-key map whose key is one edit away from a function of the
template's version is a placed warning ("did you mean get_param?"); data and declared
property names are not."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.template.hot import Template
from stoker.template.typos import function_typos, one_edit_apart


def typos(
    text: str, schemas: dict | None = None
) -> list[tuple[str | None, str | None, int | None]]:
    template = Template.load(textwrap.dedent(text), "t.yaml")
    found = function_typos(template, (schemas or {}).get)
    return [(w.path, w.hint, w.location.line if w.location else None) for w in found]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("get_parm", "get_param", True),  # a deletion
        ("get_paramm", "get_param", True),  # an insertion
        ("get_pbram", "get_param", True),  # a replacement
        ("get_pram", "get_param", True),  # two neighbours swapped
        ("gte_param", "get_param", True),
        ("get_param", "get_param", False),
        ("get_prm", "get_param", False),  # two edits
        ("get_aprma", "get_param", False),
        ("", "a", True),
        ("ab", "ba", True),
        ("abc", "cba", False),
    ],
)
def test_one_edit_apart_is_damerau_levenshtein_distance_one(first, second, expected):
    assert one_edit_apart(first, second) is expected
    assert one_edit_apart(second, first) is expected


def _distance(a: str, b: str) -> int:
    """The optimal string alignment distance, by the textbook table (the oracle)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
    return table[-1][-1]


@given(st.text("abc_", max_size=6), st.text("abc_", max_size=6))
def test_one_edit_apart_agrees_with_the_distance_table(first, second):
    assert one_edit_apart(first, second) is (_distance(first, second) == 1)


def test_typos_in_properties_outputs_and_conditions_are_placed():
    found = typos(
        """\
        heat_template_version: 2018-08-31
        parameters:
          name: {type: json, default: {get_parm: x}}
        conditions:
          named: {equals: [{get_parma: name}, x]}
        resources:
          web:
            type: OS::Heat::Value
            properties:
              value: {list_joni: [",", [a]]}
            metadata:
              deep: [{get_resurce: web}]
        outputs:
          out:
            value: {get_atr: [web, value]}
        """
    )
    # not in the parameter default: functions are not evaluated there
    assert found == [
        ("resources.web.properties.value.list_joni", "did you mean list_join?", 10),
        ("resources.web.metadata.deep[0].get_resurce", "did you mean get_resource?", 12),
        ("outputs.out.value.get_atr", "did you mean get_attr?", 15),
        ("conditions.named.equals[0].get_parma", "did you mean get_param?", 5),
    ]


def test_typos_spare_keys_the_schema_declares_and_plain_words():
    schemas = {
        "Test::Keyed": {
            "properties": {
                "get_pram": {"type": "map"},
                "servers": {
                    "type": "list",
                    "schema": {"*": {"type": "map", "schema": {"get_atr": {"type": "string"}}}},
                },
            }
        }
    }
    found = typos(
        """\
        heat_template_version: 2018-08-31
        resources:
          keyed:
            type: Test::Keyed
            properties:
              get_pram: {id: 1}
              servers: [{get_atr: a}, {get_atr: b}]
          words:
            type: OS::Heat::Value
            properties:
              value: [{ref: a}, {yaml: b}, {note: c}, {any: d}, {of: e}, {contain: f}, {repeats: g}]
          free:
            type: Test::Keyed
            properties:
              get_pram: {get_parm: c}
        """,
        schemas,
    )
    assert found == [("resources.free.properties.get_pram.get_parm", "did you mean get_param?", 15)]


def test_typos_of_a_cfn_template_name_its_functions():
    found = typos(
        """\
        AWSTemplateFormatVersion: 2010-09-09
        Resources:
          web:
            Type: OS::Heat::Value
            Properties:
              value: {Fn::Jion: [",", [a]]}
        """
    )
    assert found == [("Resources.web.Properties.value.Fn::Jion", "did you mean Fn::Join?", 6)]
