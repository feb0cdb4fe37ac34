"""yaql: results, argument errors, and expressions that try to run for ever or blow up."""

from __future__ import annotations

import os
import threading
import time

import pytest

from stoker.sdk.properties import UNRESOLVED
from stoker.template import budget
from stoker.template.functions import yaql_function, yaql_sandbox
from stoker.template.functions.yaql_function import YaqlLimits
from tests.unit.template.fakes import (
    PENDING,
    VERSIONS_BEFORE,
    VERSIONS_FROM,
    FakeContext,
    data_warning,
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
    assert "it appears in heat_template_version 2016-10-14" in data_warning(yaql("1"), version).message


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


def test_yaql_sandbox_stops_work_done_in_one_call_at_the_time_limit(quick_limits):
    started = time.monotonic()
    error = evaluate_error(yaql("pow(10, 10000000)"))  # one C call of many seconds: no tracer stops it

    assert error.message == "The yaql expression failed: the expression ran longer than 0.3 s and was stopped"
    assert time.monotonic() - started < 6  # not the 12-15 s the call takes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_yaql_sandbox_kills_the_worker_that_missed_the_deadline_and_starts_another(quick_limits):
    evaluate(yaql("1"))
    pool = yaql_sandbox.pool(yaql_function.current_limits().workers, yaql_function.current_limits().worker_memory_bytes)
    before = set(pool.worker_ids())

    evaluate_error(yaql("pow(10, 10000000)"))

    for pid in before - set(pool.worker_ids()):
        # Killed and reaped, not left running (reaping may take a moment on a busy machine).
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"worker {pid} is still running"
    # A new worker serves the next expression (given the default time: starting a worker
    # on a loaded machine may take longer than the 0.3 s this test's limit allows).
    yaql_function.configure(YaqlLimits())
    assert evaluate(yaql("$.data.x + 1", {"x": 1})) == 2


def test_yaql_sandbox_caller_waits_for_a_busy_worker_a_bounded_time():
    pool = yaql_sandbox.WorkerPool(size=1, memory_bytes=YaqlLimits().worker_memory_bytes)

    def request(expression: str, time_limit_s: float) -> yaql_sandbox.Request:
        return yaql_sandbox.Request(expression, {}, 200, 10_000, time_limit_s, 1_000_000)

    try:
        assert pool.evaluate(request("1 + 1", 5)) == 2  # the worker is started
        busy = threading.Thread(target=lambda: pytest.raises(yaql_sandbox.SandboxError, pool.evaluate, request("pow(10, 100000000)", 8)))
        busy.start()
        time.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(yaql_sandbox.SandboxError, match="all 1 yaql worker processes stayed busy"):
            pool.evaluate(request("1", 0.3))
        assert time.monotonic() - started < 5  # three turns of 0.3 s, not the 8 s expression
        busy.join()
    finally:
        pool.close()


def test_yaql_sandbox_slow_expressions_do_not_fail_others():
    """Callers queued behind slow expressions wait their turn: each slow one holds a worker
    for at most its own limit, so a quick one is answered, not failed for their slowness."""
    pool = yaql_sandbox.WorkerPool(size=2, memory_bytes=YaqlLimits().worker_memory_bytes)

    def request(expression: str) -> yaql_sandbox.Request:
        return yaql_sandbox.Request(expression, {}, 200, 10_000, 1.0, 1_000_000)

    outcomes: dict[str, object] = {}

    def run(name: str, expression: str) -> None:
        try:
            outcomes[name] = pool.evaluate(request(expression))
        except yaql_sandbox.SandboxError as error:
            outcomes[name] = error

    try:
        slow = [threading.Thread(target=run, args=(f"slow{index}", "pow(10, 10000000)")) for index in range(4)]
        for thread in slow:
            thread.start()
        time.sleep(0.2)
        quick = [threading.Thread(target=run, args=(f"quick{index}", "1 + 1")) for index in range(2)]
        for thread in quick:
            thread.start()
        for thread in slow + quick:
            thread.join()
    finally:
        pool.close()
    assert outcomes["quick0"] == outcomes["quick1"] == 2, outcomes
    assert all(isinstance(outcomes[f"slow{index}"], yaql_sandbox.SandboxError) for index in range(4))


def test_yaql_sandbox_reuses_its_worker():
    evaluate(yaql("1"))
    pool = yaql_sandbox.pool(yaql_function.current_limits().workers, yaql_function.current_limits().worker_memory_bytes)
    before = pool.worker_ids()

    for number in range(20):
        assert evaluate(yaql("$.data.n * 2", {"n": number})) == 2 * number

    assert pool.worker_ids() == before


def test_yaql_regex_cannot_backtrack_and_keeps_its_meaning():
    started = time.monotonic()

    assert evaluate(yaql("regex('(a+)+$').matches('" + "a" * 48 + "!')")) is False
    assert time.monotonic() - started < 5  # a backtracking matcher would never end
    # the functions matching with RE2 answer as yaql's own do
    assert evaluate(yaql("'abc' =~ 'a.c'")) is True
    assert evaluate(yaql("regex('A', ignoreCase => true).matches('a')")) is True
    assert evaluate(yaql("'a,b;c'.split(regex('[,;]'))")) == ["a", "b", "c"]
    assert evaluate(yaql("'abc'.replace(regex('b'), 'X')")) == "aXc"
    assert evaluate(yaql("regex('(b)(c)').search('abc', $2.value)")) == "b"
    assert evaluate(yaql("escapeRegex('a.b')")) == "a\\.b"


def test_yaql_regex_with_a_backreference_is_matched_under_the_time_limit():
    assert evaluate(yaql(r"regex('(a)\\1').matches('aa')")) is True

    started = time.monotonic()
    error = evaluate_error(yaql(r"regex('(?=a)(a|aa)+$').matches('" + "a" * 80 + "!')"))
    assert time.monotonic() - started < 10  # given up after 1 s; room for a busy machine
    assert "longer than 1 s" in error.message  # the worker or the matcher gave up


def test_yaql_sandbox_memory_is_limited():
    before = yaql_function.current_limits()
    yaql_function.configure(YaqlLimits(memory_quota=10**12, limit_iterators=10**9, worker_memory_bytes=128 * 1024 * 1024, time_limit_s=30))
    try:
        error = evaluate_error(yaql("'x' * 500000000"))
    finally:
        yaql_function.configure(before)

    assert "bytes of memory its evaluation may take" in error.message


def test_yaql_result_is_held_to_the_value_budget():
    before = budget.max_value_bytes()
    budget.configure(1000)
    try:
        error = evaluate_error(yaql("range(150).select(str($) + '-----')"))
    finally:
        budget.configure(before)

    assert error.message == "The yaql expression failed: the expression made a value of more than 1000 bytes"


def test_yaql_limits_are_configurable():
    before = yaql_function.current_limits()
    yaql_function.configure(YaqlLimits(limit_iterators=5))
    try:
        assert "more than 5 elements" in evaluate_error(yaql("range(10).sum()")).message
        assert evaluate(yaql("range(4).sum()")) == 6
    finally:
        yaql_function.configure(before)
