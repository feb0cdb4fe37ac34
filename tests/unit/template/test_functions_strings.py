"""str_replace_strict, str_replace_vstrict, str_split and digest, per template version."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.strings import (
    Digest,
    StrReplaceStrict,
    StrReplaceVeryStrict,
    StrSplit,
    digest_algorithms,
)
from tests.unit.template.fakes import (
    PENDING,
    VERSIONS_BEFORE,
    VERSIONS_FROM,
    FakeContext,
    data_warning,
    evaluate,
    evaluate_error,
    parse_error,
    parse_ok,
)


def strict(template, params, name="str_replace_strict"):
    return {name: {"template": template, "params": params}}


# -- str_replace_strict ------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-02-24"])
def test_str_replace_strict_replaces_like_str_replace(version):
    assert evaluate(strict("Hello NAME, NAME", {"NAME": "you", "Hello": "Hi"}), version=version) == "Hi you, you"
    assert isinstance(parse_ok(strict("x", {"x": 1}), version), StrReplaceStrict)


def test_str_replace_strict_refuses_params_the_template_lacks():
    error = evaluate_error(strict("Hello NAME", {"NAME": "you", "$other": "x", "$long_one": "y"}))

    # Heat's message, keys longest first
    assert error.message == "The following params were not found in the template: $long_one,$other"
    assert error.path == "resources.server.properties"


def test_str_replace_strict_key_only_inside_a_longer_key_is_not_found():
    # As Heat: the longer key is split out first, the shorter one is never seen.
    error = evaluate_error(strict("$var10", {"$var1": "a", "$var10": "b"}))

    assert "not found in the template: $var1" in error.message


def test_str_replace_strict_accepts_empty_values():
    assert evaluate(strict("a<X>b", {"X": None})) == "a<>b"
    assert evaluate(strict("a<X>b", {"X": ""})) == "a<>b"


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2017-02-24"])
def test_str_replace_strict_before_2017_02_24_says_where_it_appears(version):
    warning = data_warning(strict("x", {"x": "y"}), version)

    assert warning.message == (
        f"'str_replace_strict' is not a function in heat_template_version {version} (it appears in "
        "heat_template_version 2017-02-24), so this is read as a plain map, as Heat reads it"
    )


# -- str_replace_vstrict -----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-09-01"])
def test_str_replace_vstrict_replaces(version):
    assert evaluate(strict("v=V", {"V": 0}, "str_replace_vstrict"), version=version) == "v=0"
    assert evaluate(strict("v=V", {"V": False}, "str_replace_vstrict"), version=version) == "v=False"
    assert isinstance(parse_ok(strict("x", {"x": 1}, "str_replace_vstrict"), version), StrReplaceVeryStrict)


@pytest.mark.parametrize("value", [None, "", [], {}])
def test_str_replace_vstrict_refuses_empty_values(value):
    error = evaluate_error(strict("v=V", {"V": value}, "str_replace_vstrict"))

    assert error.message == (
        "str_replace_vstrict has an undefined or empty value for param V, must be a defined non-empty value"
    )


def test_str_replace_vstrict_is_strict_too():
    error = evaluate_error(strict("v", {"V": "x"}, "str_replace_vstrict"))

    assert "not found in the template: V" in error.message


@pytest.mark.parametrize("version", ["2017-02-24", "2016-10-14"])
def test_str_replace_vstrict_before_2017_09_01_says_where_it_appears(version):
    warning = data_warning(strict("x", {"x": "y"}, "str_replace_vstrict"), version)

    assert "it appears in heat_template_version 2017-09-01" in warning.message


def test_str_replace_strict_with_an_unresolved_value_is_unresolved():
    assert evaluate(strict("x", {"x": {"get_resource": "pending"}}), PENDING) is UNRESOLVED


# -- str_split -------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2015-10-15"])
def test_str_split_splits(version):
    assert evaluate({"str_split": [",", "a,b,c"]}, version=version) == ["a", "b", "c"]
    assert isinstance(parse_ok({"str_split": [",", "x"]}, version), StrSplit)


@pytest.mark.parametrize(("index", "item"), [(0, "a"), (2, "c"), ("1", "b"), (-1, "c")])
def test_str_split_with_an_index_gives_one_item(index, item):
    assert evaluate({"str_split": [",", "a,b,c", index]}) == item


def test_str_split_index_out_of_range_names_the_range():
    error = evaluate_error({"str_split": [",", "a,b,c", 3]})

    assert error.message == 'Incorrect index to "str_split" should be between 0 and 2'


def test_str_split_index_that_is_not_a_number():
    error = evaluate_error({"str_split": [",", "a,b", "x"]})

    assert error.message == 'Incorrect index to "str_split" should be: "str_split" : [ ",", "apples,pears", <index>]'


def test_str_split_of_none_is_none():
    assert evaluate({"str_split": [",", {"get_param": "p"}]}, FakeContext(parameters={"p": None})) is None


@pytest.mark.parametrize("args", ["a,b", {"a": 1}, [","]])
def test_str_split_argument_shape(args):
    error = parse_error({"str_split": args})

    assert error.message == 'Incorrect arguments to "str_split" should be: "str_split" : [ ",", "apples,pears", <index>]'


def test_str_split_value_must_be_a_string():
    error = evaluate_error({"str_split": [",", {"get_param": "p"}]}, FakeContext(parameters={"p": ["a"]}))

    assert "must be a string" in error.message


def test_str_split_empty_delimiter_is_refused():
    assert "non-empty string" in evaluate_error({"str_split": ["", "abc"]}).message


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2015-10-15"])
def test_str_split_before_2015_10_15_says_where_it_appears(version):
    warning = data_warning({"str_split": [",", "a"]}, version)

    assert "it appears in heat_template_version 2015-10-15" in warning.message


def test_str_split_of_an_unresolved_string_is_unresolved():
    assert evaluate({"str_split": [",", {"get_resource": "pending"}]}, PENDING) is UNRESOLVED


@given(
    delimiter=st.text(alphabet=",;-", min_size=1, max_size=2),
    items=st.lists(st.text(alphabet="abc ", max_size=5), min_size=1, max_size=6),
)
def test_str_split_undoes_list_join(delimiter, items):
    joined = evaluate({"list_join": [delimiter, items]})
    pieces = evaluate({"str_split": [delimiter, joined]})

    assert delimiter.join(pieces) == joined
    if not any(delimiter in item for item in items):
        assert pieces == items


@given(delimiter=st.text(alphabet=",;", min_size=1, max_size=2), text=st.text(alphabet="ab,;", max_size=12), data=st.data())
def test_str_split_index_matches_the_list(delimiter, text, data):
    pieces = evaluate({"str_split": [delimiter, text]})
    index = data.draw(st.integers(0, len(pieces) - 1))

    assert evaluate({"str_split": [delimiter, text, index]}) == pieces[index]


# -- digest ----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2015-04-30"])
@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"])
def test_digest_hashes_with_the_algorithm(version, algorithm):
    expected = hashlib.new(algorithm, b"hello").hexdigest()

    assert evaluate({"digest": [algorithm, "hello"]}, version=version) == expected
    assert isinstance(parse_ok({"digest": [algorithm, "x"]}, version), Digest)


def test_digest_algorithm_name_is_case_insensitive():
    assert evaluate({"digest": ["SHA256", "x"]}) == hashlib.sha256(b"x").hexdigest()


def test_digest_encodes_latin_1_as_heat():
    assert evaluate({"digest": ["md5", "café"]}) == hashlib.md5("café".encode("latin-1")).hexdigest()


def test_digest_text_beyond_latin_1_is_refused():
    assert "Latin-1" in evaluate_error({"digest": ["md5", "\u20ac"]}).message


def test_digest_unknown_algorithm_lists_the_algorithms():
    error = evaluate_error({"digest": ["crc32", "x"]})

    assert error.message.startswith("Algorithm must be one of ")
    assert "sha256" in error.message


def test_digest_algorithms_are_every_one_hashlib_names():
    assert set(digest_algorithms()) == hashlib.algorithms_available


def test_digest_with_shake_fails_as_heat_whose_hexdigest_needs_a_length():
    assert "needs a length" in evaluate_error({"digest": ["shake_128", "x"]}).message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("sha256", 'Argument to function "digest" must be a list of strings'),
        (["sha256", 5], 'Argument to function "digest" must be a list of strings'),
        (["sha256"], 'Function "digest" usage: ["<algorithm>", "<value>"]'),
        (["sha256", "a", "b"], 'Function "digest" usage: ["<algorithm>", "<value>"]'),
    ],
)
def test_digest_argument_errors(args, message):
    assert evaluate_error({"digest": args}).message == message


def test_digest_computed_arguments_are_checked_when_resolved():
    context = FakeContext(parameters={"algorithm": "nope", "value": "x"})

    error = evaluate_error({"digest": [{"get_param": "algorithm"}, {"get_param": "value"}]}, context)
    assert error.message.startswith("Algorithm must be one of")


@pytest.mark.parametrize("version", ["2013-05-23", "2014-10-16"])
def test_digest_before_2015_04_30_says_where_it_appears(version):
    assert "it appears in heat_template_version 2015-04-30" in data_warning({"digest": ["md5", "x"]}, version).message


def test_digest_of_an_unresolved_value_is_unresolved():
    assert evaluate({"digest": ["md5", {"get_resource": "pending"}]}, PENDING) is UNRESOLVED
