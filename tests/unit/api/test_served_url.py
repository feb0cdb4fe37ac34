"""Where agents reach a server that was given no STOKER_PUBLIC_URL."""

from __future__ import annotations

import socket

import pytest

from stoker.api.app import served_url


@pytest.mark.parametrize(
    ("host", "expected"),
    [("127.0.0.1", "http://127.0.0.1:9004"), ("::1", "http://[::1]:9004"), ("stoker.example.com", "http://stoker.example.com:9004")],
)
def test_served_url_is_the_address_served_on(host, expected):
    assert served_url(host, 9004) == expected


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_served_url_of_every_address_is_this_machines_name(host):
    assert served_url(host, 9004) == f"http://{socket.getfqdn()}:9004"
