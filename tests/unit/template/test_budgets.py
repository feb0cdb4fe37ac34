"""Value size budgets: what a small template may ask the functions and the loader to build.

Each case is a small template that asks for a large value; it must be refused with the
function's name and place, before the value is built (the budgets here are the defaults:
1 MiB for one value, 2 MiB for a template with its aliases written out).
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from stoker.sdk.constraints import AllowedPattern
from stoker.template import budget, loader
from stoker.template.errors import TemplateLimitError
from tests.unit.template.fakes import FakeContext, evaluate, evaluate_error

LIMIT = budget.DEFAULT_MAX_VALUE_BYTES


def doubling(levels: int) -> dict:
    """str_replace that doubles its input, nested ``levels`` deep: 2 ** levels characters."""
    value: object = "ab"
    for _ in range(levels):
        value = {"str_replace": {"template": "XX", "params": {"X": value}}}
    return value  # type: ignore[return-value]


def test_budget_size_of_is_the_json_length():
    value = {"a": [1, "xyz", None, True, {"é": 2.5}], "b": "c"}

    assert budget.size_of(value) == pytest.approx(len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()), abs=30)


def test_budget_size_of_stops_at_the_limit():
    shared = "x" * 1000
    huge = [shared] * 10_000_000  # 10 GB of JSON, one string in memory

    started = time.monotonic()
    assert budget.size_of(huge, 5000) > 5000
    assert time.monotonic() - started < 2  # not the minutes 10 GB would take


def test_budget_str_replace_that_doubles_is_refused_before_it_is_built():
    error = evaluate_error(doubling(24))  # 32 MiB

    assert isinstance(error, TemplateLimitError)
    assert error.message.startswith('"str_replace" makes a value of ')
    assert f"one value may take at most {LIMIT} bytes" in error.message
    assert error.path.startswith("resources.server.properties.str_replace.params.X")
    assert error.hint == "make the value smaller, or raise STOKER_MAX_VALUE_BYTES"
    assert evaluate(doubling(16)) == "ab" * 2**16  # within the budget: built


def test_budget_list_join_of_many_references_is_refused():
    big = "x" * 100_000
    context = FakeContext(parameters={"big": big})
    data = {"list_join": [",", [{"get_param": "big"}] * 60]}  # 6 MB from 100 KB

    error = evaluate_error(data, context)

    assert error.message.startswith('"list_join" makes a value of more than')
    assert error.path == "resources.server.properties"


def test_budget_list_join_of_maps_is_measured_before_encoding():
    item = {"key": "v" * 50_000}
    context = FakeContext(parameters={"items": [item] * 15})  # 750 KB, and 1.5 MB joined twice

    error = evaluate_error({"list_join": [",", {"get_param": "items"}, {"get_param": "items"}]}, context)

    assert '"list_join"' in error.message


def test_budget_repeat_over_many_combinations_is_refused_at_once():
    letters = [f"{index:02d}" for index in range(100)]
    data = {"repeat": {"template": "%a%-%b%-%c%-%d%", "for_each": {"%a%": letters, "%b%": letters, "%c%": letters, "%d%": letters}}}

    started = time.monotonic()
    error = evaluate_error(data)

    assert error.message.startswith('"repeat" makes a value of at least 100000000 bytes')
    assert time.monotonic() - started < 5  # refused before it is built
    within = {"repeat": {"template": "%a%%b%", "for_each": {"%a%": ["1", "2"], "%b%": ["x", "y"]}}}
    assert evaluate(within) == ["1x", "1y", "2x", "2y"]


def test_budget_repeat_stops_when_its_copies_pass_the_budget():
    letters = [f"{index:03d}" for index in range(100)]
    data = {"repeat": {"template": {"name": "%a%%b%%c%", "size": "m1.small"}, "for_each": {"%a%": letters, "%b%": letters, "%c%": letters}}}

    started = time.monotonic()
    error = evaluate_error(data)  # 10**6 copies of about 40 bytes

    assert error.message.startswith('"repeat" makes a value of at least')
    assert time.monotonic() - started < 5  # refused before it is built


def test_budget_repeat_replacement_that_grows_a_string_is_checked_before_it_is_made():
    context = FakeContext(parameters={"long": ["y" * 20_000]})
    data = {"repeat": {"template": "%v%" * 100, "for_each": {"%v%": {"get_param": "long"}}}}  # one 2 MB string

    error = evaluate_error(data, context)

    assert '"repeat"' in error.message


def test_budget_any_function_result_is_held_to_it():
    big = ["z" * 1000] * 600
    context = FakeContext(parameters={"big": big})

    error = evaluate_error({"list_concat": [{"get_param": "big"}, {"get_param": "big"}]}, context)  # 1.2 MB

    assert error.message.startswith('"list_concat" makes a value of more than')


def test_budget_is_configurable():
    before = budget.max_value_bytes()
    budget.configure(100)
    try:
        error = evaluate_error({"list_join": ["", ["a" * 60, "b" * 60]]})
    finally:
        budget.configure(before)

    assert "one value may take at most 100 bytes" in error.message


def test_budget_loader_counts_the_bytes_of_expanded_aliases():
    text = "big: &big " + "x" * 1000 + "\nmany: [" + ", ".join(["*big"] * 5000) + "]\n"  # 5 MB expanded

    with pytest.raises(TemplateLimitError, match="expands to more than 2097152 bytes") as caught:
        loader.load(text, "aliases.yaml")

    assert caught.value.location.file == "aliases.yaml"


def test_budget_loader_expanded_bytes_are_configurable():
    text = "a: &a " + "x" * 100 + "\nb: [*a, *a, *a]\n"

    assert len(loader.load(text).data["b"]) == 3
    with pytest.raises(TemplateLimitError, match="more than 300 bytes"):
        loader.load(text, limits=loader.Limits(max_expanded_bytes=300))


def test_budget_allowed_pattern_cannot_backtrack():
    constraint = AllowedPattern("(a+)+$")

    started = time.monotonic()
    assert constraint.validate("a" * 30 + "!") is not None  # 2 ** 30 steps for a backtracking matcher
    assert time.monotonic() - started < 5


def test_budget_allowed_pattern_that_needs_backtracking_is_matched_under_a_time_limit():
    # Lookahead and backreferences (RE2 has neither) are Heat's: a common password rule.
    policy = AllowedPattern(r"^(?=.*[A-Z])(?=.*\d).{8,}$")
    assert policy.validate("Secret123") is None
    assert policy.validate("secret123") is not None
    assert AllowedPattern(r"(a)\1[a-z]+\Z").validate("aabc") is None
    # A match that backtracks for ever is given up after the limit, with the GIL free:
    # another thread goes on meanwhile.
    ticks = []
    ticking = threading.Thread(target=lambda: [ticks.append(time.sleep(0.05)) for _ in range(10)])
    started = time.monotonic()
    ticking.start()
    assert AllowedPattern(r"(?=a)(a|aa)+$").validate("a" * 80 + "!") is not None
    ticking.join()
    # Given up after its 1 s (10 s: room for a busy machine; without the limit, forever).
    assert time.monotonic() - started < 10
    assert len(ticks) == 10
