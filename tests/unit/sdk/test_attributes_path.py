"""stoker.sdk.attributes.select_path: get_attr's path, as Heat's
heat/engine/attributes.py ``select_from_attribute`` follows it (``Resource.get_attribute``
applies it to every attribute value)."""

from __future__ import annotations

import pytest

from stoker.sdk.attributes import select_path

VALUE = {"name": "web", "ips": ["10.0.0.5", "10.0.0.6"], "info": {"mac": "m", "1": "one"}}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((), VALUE),
        (("ips", 1), "10.0.0.6"),
        (("info", "mac"), "m"),
        (("info", "1"), "one"),
        (("name", 0), "w"),  # a string is a sequence: Heat indexes into it
        (("name", -1), "b"),
        (("ips", 0, 3), "0"),
        (("ips", True), "10.0.0.6"),  # bool is an int to Heat's check too
    ],
)
def test_select_path_follows_value_step_as_heat(path, expected):
    assert select_path(VALUE, path) == expected


@pytest.mark.parametrize(
    "path",
    [
        ("ips", "1"),  # list["1"]: TypeError -> None (get_param would read "1" as 1)
        ("name", "0"),
        ("info", 1),  # {"1": ...}[1]: KeyError
        ("missing",),
        ("ips", 5),
        ("name", 0, 0, 1),
        ("ips", 1.0),  # neither a string nor an integer
        ("info", "mac", "x"),
    ],
)
def test_select_path_that_cannot_be_followed_gives_none(path):
    assert select_path(VALUE, path) is None


def test_select_path_into_none_or_a_number_gives_none():
    assert select_path(None, ("a",)) is None
    assert select_path(5, (0,)) is None
