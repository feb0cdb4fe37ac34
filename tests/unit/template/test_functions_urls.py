"""make_url (from 2017-09-01)."""

from __future__ import annotations

import pytest

from stoker.sdk.properties import UNRESOLVED
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


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-09-01"])
def test_make_url_from_every_part(version):
    data = {
        "make_url": {
            "scheme": "http",
            "username": "wi/th",
            "password": "p@ss",
            "host": "example.com",
            "port": 8080,
            "path": "/foo/bar baz",
            "query": {"a": "b/c", "d": "e f"},
            "fragment": "frag ment",
        }
    }

    assert evaluate(data, version=version) == "http://wi%2Fth:p%40ss@example.com:8080/foo/bar%20baz?a=b/c&d=e+f#frag%20ment"


@pytest.mark.parametrize(
    ("args", "url"),
    [
        ({"scheme": "https", "host": "example.com"}, "https://example.com"),
        ({"scheme": "http", "host": "::1", "port": "80"}, "http://[::1]:80"),
        ({"scheme": "http", "host": "[fd00::1]", "path": "/"}, "http://[fd00::1]/"),
        ({"scheme": "http", "host": "h", "username": "u"}, "http://u@h"),
        ({"path": "relative/path"}, "relative/path"),
    ],
)
def test_make_url_parts(args, url):
    assert evaluate({"make_url": args}) == url


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("http://x", 'The arguments to "make_url" must be a map'),
        ({"host": "h", "foo": "bar"}, 'Invalid arguments to "make_url": foo'),
        ({"host": 5}, 'The "host" argument to "make_url" must be a string'),
        ({"query": "a=b"}, 'The "query" argument to "make_url" must be a map'),
        ({"port": 0}, "Invalid URL port 0, must be in range 1-65535"),
        ({"port": 65536}, "Invalid URL port 65536, must be in range 1-65535"),
        ({"port": "http"}, 'Invalid URL port "http" for make_url'),
    ],
)
def test_make_url_argument_errors(args, message):
    assert parse_error({"make_url": args}).message.startswith(message)


def test_make_url_computed_parts_are_checked_when_resolved():
    error = evaluate_error({"make_url": {"port": {"get_param": "p"}}}, FakeContext(parameters={"p": 99999}))

    assert error.message == "Invalid URL port 99999, must be in range 1-65535"


def test_make_url_scheme_with_a_colon_is_refused():
    assert evaluate_error({"make_url": {"scheme": "http:"}}).message == "URL \"scheme\" should not contain ':'"


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2017-09-01"])
def test_make_url_before_2017_09_01_says_where_it_appears(version):
    assert "it appears in heat_template_version 2017-09-01" in data_warning({"make_url": {}}, version).message


def test_make_url_of_an_unresolved_host_is_unresolved():
    assert evaluate({"make_url": {"host": {"get_attr": ["pending", "ip"]}}}, PENDING) is UNRESOLVED
