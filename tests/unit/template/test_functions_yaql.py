"""yaql: results, argument errors, and expressions that try to run for ever or blow up."""

from __future__ import annotations

import time

import pytest

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions import yaql_function
from stoker.template.functions.yaql_function import YaqlLimits
from tests.unit.template.fakes import (
    PENDING,
    VERSIONS_BEFORE,
    VERSIONS_FROM,
    FakeContext,
    evaluate,
    evaluate_error,
    parse_error,
)


def yaql(expression, data=None):
    args = {"expression": expression}
    if data is not None:
        args["data"] = data
    return {"yaql": args}


@pytest.fixture
def quick_limits():
    """A short wall-time limit, restored afterwards."""
    before = yaql_function.current_limits()
    yaql_function.configure(YaqlLimits(time_limit_s=0.3))
    yield
    yaql_function.configure(before)


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-10-14"])
def test_yaql_evaluates_on_data(version):
    assert evaluate(yaql("$.data.var1.sum()", {"var1": [1, 2, 3, 4]}), version=version) == 10


def test_yaql_without_data():
    assert evaluate(yaql("1 + 3")) == 4


def test_yaql_data_can_be_computed():
    data = {"var1": {"list_join": ["", ["1", "2"]]}, "p": {"get_param": "p"}}

    assert evaluate(yaql("$.data.var1.len() + $.data.p", data), FakeContext(parameters={"p": 5})) == 7


def test_yaql_merge_of_maps():
    data = {"d": [{"a": [1]}, {"a": [2]}, {"a": [3]}]}

    assert evaluate(yaql("$.data.d.reduce($1.mergeWith($2))", data)) == {"a": [1, 2, 3]}


def test_yaql_expression_can_be_computed():
    context = FakeContext(parameters={"e": "$.data.x * 2"})

    assert evaluate(yaql({"get_param": "e"}, {"x": 21}), context) == 42


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("invalid", 'Arguments to "yaql" must be a map.'),
        ({"wrong": "wrong_expr", "wrong_data": "mustbeamap"}, '"yaql" syntax should be a map with the keys expression and (optionally) data'),
        ({"expression": "1", "data": {}, "bogus": ""}, '"yaql" syntax should be a map with the keys expression and (optionally) data'),
        ({"expression": 5}, 'The "expression" argument to yaql must contain a string.'),
        ({"expression": "invalid("}, "Bad expression Parse error: unexpected end of statement."),
    ],
)
def test_yaql_argument_errors(args, message):
    assert parse_error({"yaql": args}).message == message


def test_yaql_computed_expression_is_checked_when_resolved():
    error = evaluate_error(yaql({"get_param": "e"}), FakeContext(parameters={"e": "invalid("}))

    assert error.message == "Bad expression Parse error: unexpected end of statement."


def test_yaql_runtime_error_is_a_template_error():
    error = evaluate_error(yaql("$.data.a + 1", {"a": "text"}))

    assert error.message.startswith("The yaql expression failed:")
    assert error.path == "resources.server.properties"


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2016-10-14"])
def test_yaql_before_2016_10_14_says_where_it_appears(version):
    assert "it appears in heat_template_version 2016-10-14" in parse_error(yaql("1"), version).message


def test_yaql_of_unresolved_data_is_unresolved():
    assert evaluate(yaql("$.data.x", {"x": {"get_attr": ["pending", "x"]}}), PENDING) is UNRESOLVED


# -- hostile expressions ------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "sequence().len()",  # an endless count: a Python loop inside yaql, no collection built
        "range(200).select(range(200).select(range(200).select(range(200).len()).len()).len()).len()",  # 1.6e9 steps
    ],
)
def test_yaql_that_loops_is_stopped_by_the_time_limit(quick_limits, expression):
    started = time.monotonic()
    error = evaluate_error(yaql(expression))
    elapsed = time.monotonic() - started

    assert error.message == "The yaql expression failed: the expression ran longer than 0.3 s and was stopped"
    assert elapsed < 2.0


@pytest.mark.parametrize("expression", ["range(1000000).sum()", "sequence().toList()", "range(0, 1000).select($ * 2)"])
def test_yaql_collection_past_the_iterator_limit_is_refused(expression):
    started = time.monotonic()
    error = evaluate_error(yaql(expression))

    assert error.message == "The yaql expression failed: the expression built a collection of more than 200 elements"
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("expression", ["'x' * 100000", "range(30).aggregate($1 + $1, 'ab')", "range(100).select('x' * 150).join('')"])
def test_yaql_value_past_the_memory_quota_is_refused(expression):
    error = evaluate_error(yaql(expression))

    assert error.message == "The yaql expression failed: the expression used more than 10000 bytes of memory"


def test_yaql_data_past_the_iterator_limit_is_refused():
    error = evaluate_error(yaql("$.data.items.select($ + 1)", {"items": list(range(201))}))

    assert "more than 200 elements" in error.message


@pytest.mark.parametrize("expression", ["(" * 5000 + "1" + ")" * 5000, "-" * 3000 + "1"])
def test_yaql_deeply_nested_expression_is_refused(expression):
    with pytest.raises(ValueError, match="the expression is nested too deeply"):
        yaql_function.evaluate(expression, {})


def test_yaql_time_guard_restores_the_previous_tracer(quick_limits):
    import sys

    calls = []

    def tracer(frame, event, arg):
        calls.append(event)

    sys.settrace(tracer)
    try:
        evaluate_error(yaql("sequence().len()"))
        after = sys.gettrace()
    finally:
        sys.settrace(None)
    assert after is tracer


def test_yaql_limits_are_configurable():
    before = yaql_function.current_limits()
    yaql_function.configure(YaqlLimits(limit_iterators=5))
    try:
        assert "more than 5 elements" in evaluate_error(yaql("range(10).sum()")).message
        assert evaluate(yaql("range(4).sum()")) == 6
    finally:
        yaql_function.configure(before)
