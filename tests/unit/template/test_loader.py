"""stoker.template.loader: safe YAML/JSON loading, limits and the source map."""

from __future__ import annotations

import json

import pytest
import yaml

from stoker.template import loader
from stoker.template.errors import (
    Location,
    TemplateError,
    TemplateLimitError,
    TemplateSyntaxError,
    format_path,
)
from stoker.template.loader import Document, Limits

TEMPLATE = """\
heat_template_version: 2013-05-23
description: a web server
resources:
  web:
    type: OS::Nova::Server
    properties:
      flavor: m1.small
      networks:
        - port: {get_resource: port}
  a:
    type: OS::Heat::None
    depends_on: [web, b]
"""


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """Each level is a list of ``width`` aliases of the level before."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, levels):
        aliases = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


# -- parsing -------------------------------------------------------------------


def test_load_yaml_gives_plain_data():
    document = loader.load(TEMPLATE, "web.yaml")

    assert document.file == "web.yaml"
    assert document.data["resources"]["web"]["properties"] == {
        "flavor": "m1.small",
        "networks": [{"port": {"get_resource": "port"}}],
    }
    assert document.data["resources"]["a"]["depends_on"] == ["web", "b"]


def test_load_json_text_is_parsed():
    text = json.dumps({"heat_template_version": "2021-04-16", "resources": {"r": {"type": "OS::Heat::None"}}})

    document = loader.parse(text, "t.json")

    assert document.data == {"heat_template_version": "2021-04-16", "resources": {"r": {"type": "OS::Heat::None"}}}
    assert document.locate("resources.r.type") is not None


def test_load_template_version_stays_a_string():
    document = loader.load("heat_template_version: 2013-05-23\n")

    assert document.data["heat_template_version"] == "2013-05-23"
    assert isinstance(document.data["heat_template_version"], str)


def test_load_timestamps_stay_strings():
    document = loader.load("when: 2001-12-14t21:59:43.10-05:00\nday: 2002-12-14\n")

    assert document.data == {"when": "2001-12-14t21:59:43.10-05:00", "day": "2002-12-14"}


def test_load_scalar_types_follow_yaml():
    document = loader.load("a: 1\nb: 1.5\nc: true\nd: null\ne: '1'\nf: yes\n")

    assert document.data == {"a": 1, "b": 1.5, "c": True, "d": None, "e": "1", "f": True}


def test_load_bytes_are_decoded_as_utf8():
    document = loader.load("name: café\n".encode())

    assert document.data == {"name": "café"}


def test_load_bytes_that_are_not_utf8_are_refused():
    with pytest.raises(TemplateSyntaxError, match="not UTF-8") as caught:
        loader.load(b"name: \xff\n", "bad.yaml")

    assert caught.value.location == Location("bad.yaml", 1, 1)


def test_load_empty_text_gives_no_data():
    assert loader.load("").data is None
    assert loader.load("# only a comment\n").data is None


# -- syntax errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("a: 1\n  b: 2\n", 2, 4, "mapping values are not allowed"),
        ("a: 1\nb: [1, 2\nc: 3\n", 3, 2, "did not find expected ',' or ']'"),
        ('a: 1\nb: "unclosed\n', 3, 1, "while scanning a quoted scalar"),
        ("a:\n\tb: 1\n", 2, 1, "cannot start any token"),
    ],
)
def test_load_bad_yaml_gives_file_line_and_column(text, line, column, words):
    with pytest.raises(TemplateSyntaxError) as caught:
        loader.load(text, "broken.yaml")

    error = caught.value
    assert error.location == Location("broken.yaml", line, column)
    assert words in error.message
    assert str(error).startswith(f"broken.yaml:{line}:{column}: Invalid YAML")


def test_load_tab_indentation_gets_a_hint():
    with pytest.raises(TemplateSyntaxError) as caught:
        loader.load("a:\n\tb: 1\n")

    assert caught.value.hint == "indent with spaces, not tabs"


def test_load_without_file_name_says_template():
    with pytest.raises(TemplateSyntaxError) as caught:
        loader.load("a: [1\n")

    assert str(caught.value).startswith("<template>:2:1:")


def test_load_several_documents_are_refused():
    with pytest.raises(TemplateSyntaxError, match="single document") as caught:
        loader.load("a: 1\n---\nb: 2\n", "two.yaml")

    assert caught.value.location == Location("two.yaml", 2, 1)


def test_load_undefined_alias_is_refused():
    with pytest.raises(TemplateSyntaxError, match="undefined alias 'x'") as caught:
        loader.load("a: 1\nb: *x\n")

    assert caught.value.location.line == 2


def test_load_duplicate_anchor_is_refused():
    with pytest.raises(TemplateSyntaxError, match="duplicate anchor 'x' .first defined on line 1."):
        loader.load("a: &x 1\nb: &x 2\n")


def test_load_non_scalar_key_is_refused():
    with pytest.raises(TemplateSyntaxError, match="mapping key must be a string") as caught:
        loader.load("top:\n  ? [a, b]\n  : 1\n")

    assert caught.value.path == "top"
    assert caught.value.location.line == 2


# -- duplicate keys: last-wins, as both of Heat's readers (PyYAML, json) -------------
# Heat never refuses a key written twice: PyYAML's construct_mapping and json.loads both
# keep the last value. stoker does the same and says so in a warning with the place.


def test_load_duplicate_key_is_last_wins_with_a_located_warning():
    text = "resources:\n  web:\n    type: A\n    type: B\n"

    document = loader.load(text, "dup.yaml")

    assert document.data == {"resources": {"web": {"type": "B"}}}
    (warning,) = document.warnings
    assert warning.message == "Duplicate key 'type' (first on line 3): the last value is used, as Heat reads it"
    assert warning.path == "resources.web.type"
    assert warning.location == Location("dup.yaml", 4, 5)
    assert document.locate("resources.web.type") == Location("dup.yaml", 4, 11)


def test_load_duplicate_top_level_key_keeps_the_last_section():
    document = loader.load("resources: {a: {type: X}}\nresources: {}\n")

    assert document.data == {"resources": {}}
    assert [warning.location.line for warning in document.warnings] == [2]


def test_parse_duplicate_key_in_json_is_last_wins_with_a_located_warning():
    document = loader.parse('{"a": 1,\n "a": 2}', "dup.json")

    assert document.data == json.loads('{"a": 1,\n "a": 2}') == {"a": 2}
    (warning,) = document.warnings
    assert warning.path == "a"
    assert warning.location == Location("dup.json", 2, 2)


def test_load_merge_key_values_can_be_overridden():
    document = loader.load("base: &base {a: 1, c: 3}\nx:\n  <<: *base\n  a: 2\n")

    assert document.data["x"] == {"a": 2, "c": 3}


def test_load_duplicate_key_next_to_a_merge_is_last_wins():
    document = loader.load("base: &base {c: 3}\nx:\n  <<: *base\n  a: 1\n  a: 2\n")

    assert document.data["x"] == {"c": 3, "a": 2}
    assert [(warning.path, warning.location.line) for warning in document.warnings] == [("x.a", 5)]


def test_load_merged_key_overridden_by_the_map_is_no_duplicate():
    assert loader.load("base: &base {a: 1}\nx:\n  <<: *base\n  a: 2\n").warnings == []


def test_load_merge_of_a_scalar_is_a_syntax_error():
    with pytest.raises(TemplateSyntaxError, match="Invalid YAML merge") as caught:
        loader.load("x:\n  <<: 1\n")

    assert caught.value.location == Location(None, 2, 7)


# -- tags ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "node",
    [
        "!!python/object/apply:os.system 'touch {marker}'",
        "!!python/object/apply:os.system {{args: ['touch {marker}']}}",
        "!!python/object/apply:os.system ['touch {marker}']",
    ],
    ids=["scalar", "mapping", "sequence"],
)
def test_load_python_object_tags_are_refused(tmp_path, node):
    marker = tmp_path / "executed"
    text = f"resources:\n  evil: {node.format(marker=marker)}\n"

    with pytest.raises(TemplateSyntaxError, match="Unsupported YAML tag") as caught:
        loader.parse(text, "evil.yaml")

    assert "python/object/apply:os.system" in caught.value.message
    assert caught.value.path == "resources.evil"
    assert caught.value.location == Location("evil.yaml", 2, 9)
    assert not marker.exists()


@pytest.mark.parametrize(
    "node",
    ["!!python/name:os.system", "!!python/module:os", "!!set {a, b}", "!custom value", "!!omap [a: 1]"],
)
def test_load_other_non_data_tags_are_refused(node):
    with pytest.raises(TemplateSyntaxError, match="Unsupported YAML tag"):
        loader.load(f"value: {node}\n")


def test_load_standard_scalar_tags_are_accepted():
    document = loader.load("a: !!str 1\nb: !!int '2'\nc: !!float '1.5'\n")

    assert document.data == {"a": "1", "b": 2, "c": 1.5}


def test_load_value_that_does_not_fit_its_tag_is_a_syntax_error():
    with pytest.raises(TemplateSyntaxError, match="Invalid value 'abc'") as caught:
        loader.load("count: !!int abc\n")

    assert caught.value.path == "count"


# -- limits --------------------------------------------------------------------


def test_load_alias_bomb_is_refused():
    # 9 ** 9 (387 million) strings once expanded; refused before expanding anything.
    with pytest.raises(TemplateLimitError, match="expands to more than") as caught:
        loader.load(billion_laughs(), "lol.yaml")

    assert caught.value.location.file == "lol.yaml"
    assert caught.value.hint == "YAML aliases expand to copies; use fewer or smaller anchors"


def test_load_alias_bomb_is_refused_by_parse_too():
    with pytest.raises(TemplateLimitError):
        loader.parse(billion_laughs())


def test_load_aliases_within_the_limit_are_expanded():
    document = loader.load(billion_laughs(levels=3, width=3))

    assert document.data["l2"] == [[["lol"] * 3] * 3] * 3
    # an expanded alias is located where its anchor's content is written
    assert document.locate("l2[2][1][0]") == Location(None, 1, 10)


def test_load_alias_expansion_counts_against_max_nodes():
    text = billion_laughs(levels=3, width=3)  # l2 alone expands to 1 + 3 + 9 + 27 nodes

    with pytest.raises(TemplateLimitError, match="more than 30 nodes"):
        loader.load(text, limits=Limits(max_nodes=30))


def test_load_recursive_alias_is_refused():
    with pytest.raises(TemplateLimitError, match="refers to the collection that contains it"):
        loader.load("a: &a [1, *a]\n")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 12 + "]" * 12,
        "{a: " * 12 + "1" + "}" * 12,
        "".join(" " * (2 * level) + f"k{level}:\n" for level in range(12)) + " " * 24 + "x\n",
        "- " * 12 + "x\n",
    ],
    ids=["flow-list", "flow-map", "block-map", "block-list"],
)
def test_load_deeper_than_max_depth_is_refused(text):
    with pytest.raises(TemplateLimitError, match="nested more than 10 levels deep"):
        loader.load(text, limits=Limits(max_depth=10))


def test_load_at_max_depth_is_accepted():
    document = loader.load("[" * 10 + "]" * 10, limits=Limits(max_depth=10))

    assert document.data == [[[[[[[[[[]]]]]]]]]]


def test_load_very_deep_nesting_is_refused_quickly():
    # libyaml's own composer recurses in C and crashes on this; its scanner is quadratic.
    with pytest.raises(TemplateLimitError, match="nested more than 200 levels deep") as caught:
        loader.parse("[" * 100_000 + "]" * 100_000)

    assert caught.value.location == Location(None, 1, 201)


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("o:\n  value: " + "[" * 5000 + "]" * 5000 + "\n", Location("deep.yaml", 2, 208)),
        ("é: 1\n" + "".join(" " * level + "k:\n" for level in range(1200)) + " " * 1200 + "v\n", Location("deep.yaml", 202, 201)),
    ],
    ids=["flow", "block"],
)
def test_load_nesting_past_the_yaml_librarys_own_limit_is_refused_with_stokers_message_and_place(text, place):
    # libyaml (in PyYAML's wheels since 6.0.4) refuses nesting past 1000 levels while it
    # scans ahead, before any event reaches stoker's check: the refusal stays stoker's,
    # placed where the 201st level opens (the two maps count), whatever the library's own limit and words.
    with pytest.raises(TemplateLimitError) as caught:
        loader.load(text, "deep.yaml", Limits(max_bytes=10 * 2**20))

    assert str(caught.value) == f"{place.file}:{place.line}:{place.column}: The document is nested more than 200 levels deep"
    assert caught.value.location == place


def test_load_nesting_through_aliases_counts_against_max_depth():
    text = "a: &a [[[1]]]\nb: &b [[[*a]]]\nc: [[[*b]]]\n"  # c is 10 levels deep

    assert loader.load(text, limits=Limits(max_depth=10)).data["c"] == [[[[[[[[[1]]]]]]]]]
    with pytest.raises(TemplateLimitError, match="nested more than 9 levels deep"):
        loader.load(text, limits=Limits(max_depth=9))


def test_load_oversize_text_is_refused():
    text = "description: " + "x" * 100 + "\n"

    with pytest.raises(TemplateLimitError) as caught:
        loader.load(text, "big.yaml", limits=Limits(max_bytes=50))

    error = caught.value
    assert error.message == f"Template size ({len(text)} bytes) exceeds maximum allowed size (50 bytes)"
    assert error.location == Location("big.yaml", 1, 1)
    assert error.hint is not None


def test_load_text_at_the_size_limit_is_accepted():
    text = "a: " + "x" * 47  # 50 characters

    assert loader.load(text, limits=Limits(max_bytes=50)).data == {"a": "x" * 47}


def test_parse_oversize_json_is_refused():
    text = json.dumps({"k" * 2000: 1})  # a key too long for YAML: read as JSON

    with pytest.raises(TemplateLimitError, match="exceeds maximum allowed size"):
        loader.parse(text, limits=Limits(max_bytes=100))


# -- JSON fallback ---------------------------------------------------------------


def test_parse_reads_json_that_yaml_refuses():
    # YAML allows implicit keys of at most 1024 characters; JSON has no such limit.
    key = "k" * 1100
    text = json.dumps({key: [1, 2]})
    with pytest.raises(TemplateSyntaxError):
        loader.load(text)

    assert loader.parse(text, "long.json").data == {key: [1, 2]}


def test_parse_json_fallback_limits_depth():
    text = '{"' + "k" * 1100 + '": ' + "[" * 20 + "]" * 20 + "}"

    with pytest.raises(TemplateLimitError, match="nested more than 10 levels deep"):
        loader.parse(text, limits=Limits(max_depth=10))


def test_parse_json_that_yaml_refuses_keeps_the_last_duplicate():
    key = "k" * 1100
    text = f'{{"{key}": 1, "{key}": 2}}'

    document = loader.parse(text)

    assert document.data == {key: 2}
    assert [warning.message.startswith(f"Duplicate key '{key}'") for warning in document.warnings] == [True]


def test_load_json_reports_line_and_column():
    with pytest.raises(TemplateSyntaxError, match="Invalid JSON") as caught:
        loader.load_json('{\n  "a": [1,\n}', "bad.json")

    assert caught.value.location == Location("bad.json", 3, 1)


def test_load_json_brackets_inside_strings_do_not_count_as_depth():
    text = json.dumps({"a": "[[[[[[[[[[[[{{{{{{{{", "b": "\\\"[[["})

    assert loader.load_json(text, limits=Limits(max_depth=2)).data == json.loads(text)


# -- source map ----------------------------------------------------------------


def test_document_locate_finds_a_property_value():
    document = loader.load(TEMPLATE, "web.yaml")

    assert document.locate("resources.web.properties.flavor") == Location("web.yaml", 7, 15)


def test_document_locate_finds_list_items():
    document = loader.load(TEMPLATE, "web.yaml")

    assert document.locate("resources.a.depends_on[0]") == Location("web.yaml", 12, 18)
    assert document.locate("resources.a.depends_on[1]") == Location("web.yaml", 12, 23)
    assert document.locate("resources.web.properties.networks[0].port.get_resource") == Location("web.yaml", 9, 32)


def test_document_locate_accepts_a_path_tuple():
    document = loader.load(TEMPLATE, "web.yaml")

    assert document.locate(("resources", "a", "depends_on", 1)) == Location("web.yaml", 12, 23)


def test_document_locate_walks_up_to_the_parent():
    document = loader.load(TEMPLATE, "web.yaml")

    assert document.locate("resources.web.properties.image") == document.locate("resources.web.properties")
    assert document.locate("resources.a.depends_on[7]") == document.locate("resources.a.depends_on")
    assert document.locate("resources.nope.type") == document.locate("resources")
    assert document.locate("nothing.here") == Location("web.yaml", 1, 1)


def test_document_locate_without_positions_gives_none():
    document = Document({"resources": {}})

    assert document.locate("resources.web") is None
    assert document.locate(None) is None


def test_load_integer_keys_are_located_like_format_path():
    document = loader.load("ports:\n  80: http\n  443: https\n")

    assert document.data == {"ports": {80: "http", 443: "https"}}
    assert document.locate(format_path(("ports", 443))) == Location(None, 3, 8)


# -- errors module ---------------------------------------------------------------


def test_format_path_uses_dots_and_brackets():
    assert format_path(("resources", "web", "depends_on", 0)) == "resources.web.depends_on[0]"
    assert format_path(()) == ""
    assert format_path((0, "a")) == "[0].a"


def test_template_error_str_has_location_path_message_and_hint():
    error = TemplateError("bad", path="resources.web", location=Location("t.yaml", 3, 5), hint="fix it")

    assert str(error) == "t.yaml:3:5: resources.web: bad (fix it)"
    assert str(TemplateError("bad")) == "bad"


# -- cost ------------------------------------------------------------------------------


def test_load_leaves_the_garbage_collector_as_it_found_it():
    import gc

    assert gc.isenabled()
    loader.load(TEMPLATE)
    with pytest.raises(TemplateSyntaxError):
        loader.load("a: [1\n")
    assert gc.isenabled()

    gc.disable()
    try:
        loader.load(TEMPLATE)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_load_works_out_positions_only_when_asked():
    document = loader.load(TEMPLATE, "web.yaml")

    assert document._positions is None
    assert document.locate("resources.web.type") == Location("web.yaml", 5, 11)
    assert document.positions["resources.web.type"] == (5, 11)


def test_load_error_deep_in_a_document_names_its_path():
    text = "resources:\n  web:\n    properties:\n      list: [1, {a: !!int x}]\n"

    with pytest.raises(TemplateSyntaxError, match="Invalid value 'x'") as caught:
        loader.load(text)

    assert caught.value.path == "resources.web.properties.list[1].a"
    assert caught.value.location == Location(None, 4, 21)


def test_load_warning_deep_in_a_document_names_its_path():
    text = "resources:\n  web:\n    properties:\n      list: [1, {a: 1, a: 2}]\n"

    (warning,) = loader.load(text).warnings

    assert warning.path == "resources.web.properties.list[1].a"
    assert warning.location == Location(None, 4, 24)


def _composed(text: str) -> object:
    """The data as the composed path (nodes, then data) builds it."""
    yaml_loader = loader._Loader(text)
    try:
        node, _ = loader._compose(yaml_loader, None, loader.DEFAULT_LIMITS)
    finally:
        yaml_loader.dispose()
    return None if node is None else loader._Builder(yaml_loader, None, loader.DEFAULT_LIMITS).build(node, "", 0)


@pytest.mark.parametrize(
    "text",
    [
        TEMPLATE,
        "",
        "a: 1\nb: 1.5\nc: true\nd: ~\ne: 2021-04-16\nf: '007'\ng: !!str 12\nh: !!int '3'\n",
        "{a: [1, {b: [2, [3]]}], 7: seven, null: none, 1.5: x}\n",
        "- [a, b]\n- {c: d}\n- - e\n  - f\n- ''\n",
        "text: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
    ],
    ids=["template", "empty", "scalars", "flow", "lists", "block-scalars"],
)
def test_load_without_nodes_gives_what_composing_gives(text):
    assert loader.load(text).data == _composed(text)


@pytest.mark.parametrize(
    "text",
    ["a: &x [1, 2]\nb: *x\n", "base: &b {k: 1}\nm:\n  <<: *b\n  j: 2\n", "v: !!binary aGVsbG8=\n", "? [a]\n: 1\n"],
    ids=["alias", "merge", "binary", "complex-key"],
)
def test_load_documents_beyond_plain_data_are_composed(text):
    try:
        expected = _composed(text)
    except TemplateError as error:
        with pytest.raises(type(error)):
            loader.load(text)
    else:
        assert loader.load(text).data == expected


# -- values as Heat reads them (heat/common/template_format.py, environment_format.py) --


class _HeatYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Heat's ``template_format.yaml_loader``: a safe loader whose strings and timestamps
    are the scalar's text."""


_HeatYamlLoader.add_constructor("tag:yaml.org,2002:str", _HeatYamlLoader.construct_scalar)
_HeatYamlLoader.add_constructor("tag:yaml.org,2002:timestamp", _HeatYamlLoader.construct_scalar)


def heat_simple_parse(text: str) -> object:
    """Heat's ``template_format.simple_parse``: JSON first, then YAML."""
    try:
        return json.loads(text)
    except ValueError:
        return yaml.load(text, Loader=_HeatYamlLoader)


SCALARS = [
    "1e2", "1.0e+2", "1E2", "yes", "No", "on", "OFF", "y", "n", "~", "null", "2013-05-23",
    "2001-12-14t21:59:43.10-05:00", "0x1F", "010", "0o10", "1_000", "1:20", ".inf", "-.Inf", ".nan",
    "+12", "0b101", "'yes'", "\"1e2\"", "true", "True", "1.", "3.25", "-0",
]


@pytest.mark.parametrize("scalar", SCALARS)
def test_parse_yaml_scalars_as_heat_reads_them(scalar):
    text = f"heat_template_version: 2013-05-23\nvalue: {scalar}\nlist: [{scalar}]\n"
    expected = heat_simple_parse(text)

    data = loader.parse(text).data

    assert repr(data) == repr(expected)  # repr: nan != nan, and 1 == True


def test_parse_yaml_1_1_scalars_examples():
    data = loader.parse("a: 1e2\nb: yes\nc: on\nd: 2013-05-23\ne: 1.0e+2\n").data

    assert data == {"a": "1e2", "b": True, "c": True, "d": "2013-05-23", "e": 100.0}


@pytest.mark.parametrize("number", ["1e2", "1E2", "1.5e-3", "-0", "10", "1.0", "NaN", "Infinity"])
def test_parse_json_template_numbers_as_heat_reads_them(number):
    # Heat reads JSON text with jsonutils.loads before trying YAML: 1e2 is 100.0 there.
    text = '{"heat_template_version": "2013-05-23", "value": ' + number + "}"

    assert repr(loader.parse(text).data) == repr(heat_simple_parse(text))


def test_parse_json_template_keeps_positions_for_messages():
    document = loader.parse('{\n  "heat_template_version": "2013-05-23",\n  "resources": {"web": {"type": 1e2}}\n}', "t.json")

    assert document.data["resources"]["web"]["type"] == 100.0
    assert document.locate("resources.web.type") == Location("t.json", 3, 33)


def test_parse_json_template_deeper_than_max_depth_is_refused():
    text = '{"a": ' + "[" * 20 + "]" * 20 + "}"

    with pytest.raises(TemplateLimitError, match="nested more than 10 levels deep"):
        loader.parse(text, limits=Limits(max_depth=10))


def test_parse_environment_reads_json_text_as_yaml_as_heat_does():
    # environment_format.parse: yaml.load(env_str, Loader=template_format.yaml_loader).
    text = '{"parameters": {"a": 1e2, "b": 1.5}, "parameters": {"a": 1e2}}'

    document = loader.parse_environment(text, "env.json")

    assert document.data == yaml.load(text, Loader=_HeatYamlLoader) == {"parameters": {"a": "1e2"}}
    assert [(warning.path, warning.location.line) for warning in document.warnings] == [("parameters", 1)]


def test_parse_json_template_with_more_than_max_nodes_is_refused():
    text = '{"a": [' + ", ".join(["1"] * 50) + "]}"

    with pytest.raises(TemplateLimitError, match="more than 20 nodes"):
        loader.parse(text, limits=Limits(max_nodes=20))


def test_a_document_at_max_nodes_is_read_from_the_parser_events_without_a_node_tree(monkeypatch):
    # 1 root + 10 * (a mapping and its two values) = 31 nodes, each value counted once and
    # keys not, on both ways of reading. Read straight from the parser's events, a
    # 100,000-resource template takes a third of the memory of composing its nodes.
    text = "".join(f"r{i}: {{type: T, n: {i}}}\n" for i in range(10))

    def composed(*_arguments):
        raise AssertionError("composed into nodes")

    monkeypatch.setattr(loader, "_compose", composed)
    document = loader.parse(text, limits=Limits(max_nodes=31))
    assert document.data["r9"] == {"type": "T", "n": 9}
    monkeypatch.undo()
    with pytest.raises(TemplateLimitError, match="more than 30 nodes"):
        loader.parse(text, limits=Limits(max_nodes=30))
