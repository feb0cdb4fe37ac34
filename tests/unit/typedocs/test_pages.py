"""The reference's renderer on schemas in the API's shape: every value escaped, file
names one per type, constraints, update behaviour and support statuses in words, and
the index grouped by namespace with links that work served and from files."""

from __future__ import annotations

import html
import json
import re

import pytest

from stoker.typedocs import pages, schema_view
from stoker.typedocs.sources import grouped, namespace_of

HOSTILE = '<script>alert("x")</script>'

SCHEMA = {
    "resource_type": "Demo::Thing",
    "description": f"First {HOSTILE}\nstill first.\n\nSecond & last.",
    "properties": {
        "size": {
            "type": "integer", "description": "How big.", "required": False, "update_allowed": True, "immutable": False,
            "default": 3, "constraints": [{"range": {"min": 1, "max": 9}, "description": None}, {"modulo": {"step": 2, "offset": 1}, "description": "odd"}],
        },
        "name": {
            "type": "string", "description": HOSTILE, "required": True, "update_allowed": False, "immutable": True,
            "default": HOSTILE, "constraints": [{"allowed_pattern": "^<[a-z]>$", "description": None}, {"custom_constraint": "nova.flavor", "description": None}],
        },
        "items": {
            "type": "list", "description": "", "required": False, "update_allowed": False, "immutable": False,
            "schema": {"*": {"type": "map", "description": None, "required": False, "update_allowed": False, "immutable": False,
                             "schema": {"key": {"type": "string", "description": "k", "required": True, "update_allowed": False, "immutable": False,
                                                "constraints": [{"allowed_values": ["a", "<b>"], "description": None}, {"length": {"min": 1}, "description": None}]}}}},
        },
    },
    "attributes": {"value": {"description": HOSTILE, "type": "string", "support_status": {"status": "DEPRECATED", "version": "2.0", "message": "use <x>", "previous_status": {"status": "SUPPORTED", "version": "1.0", "message": None, "previous_status": None}}}},
    "properties_groups": [{"xor": [["size"], ["name"]]}],
    "support_status": {"status": "SUPPORTED", "version": "1.0", "message": None, "previous_status": None},
}  # fmt: skip


def test_pages_type_page_escapes_every_value():
    text = pages.type_page(
        SCHEMA,
        {"resources": {"Thing": {"type": "Demo::Thing", "properties": {"name": HOSTILE}}}},
        pages.STATIC_LINKS,
    )
    assert "<script>" not in text and "<b>" not in text and "<x>" not in text
    assert "First &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; still first." in text
    assert '<p class="description">Second &amp; last.</p>' in text
    escaped = html.escape(json.dumps(HOSTILE)).replace("&quot;", "&#34;")
    assert f'data-default="{escaped}"' in text
    assert "DEPRECATED since 2.0: use &lt;x&gt;; before: SUPPORTED since 1.0" in text
    assert '<h3 id="properties-groups">' in text and "xor" in text


def test_pages_type_page_orders_required_properties_first_and_flattens_members():
    rows = schema_view.property_rows(SCHEMA["properties"])
    assert [row.path for row in rows] == ["name", "size", "items", "items.*", "items.*.key"]
    assert [row.update for row in rows] == [
        schema_view.UPDATE_FAILS,
        schema_view.UPDATE_IN_PLACE,
        schema_view.UPDATE_REPLACES,
        None,
        None,
    ]
    assert rows[1].constraints == ["value at least 1 and at most 9", "a multiple of 2 plus 1 (odd)"]
    assert rows[0].constraints == ["matches the pattern ^<[a-z]>$", "must be a valid nova.flavor"]
    assert rows[4].constraints == ['one of "a", "<b>"', "length at least 1"]
    assert rows[1].default == "3" and rows[2].default is None


def test_pages_type_page_without_an_example_leaves_the_section_out():
    text = pages.type_page(SCHEMA, None, pages.SERVED_LINKS)
    assert 'id="example"' not in text
    assert 'href="./"' in text and 'href="_static/typedocs.css"' in text


@pytest.mark.parametrize(
    ("type_name", "expected"),
    [
        ("OS::Nova::Server", "OS.Nova.Server.html"),
        ("OS::Neutron::TaaS::TapService", "OS.Neutron.TaaS.TapService.html"),
        ("My.Type", "My_2e_Type.html"),
        ("My_Type", "My_5f_Type.html"),
        ("a:b", "a_3a_b.html"),
        ("index", "_index.html"),
        ("_static", "_5f_static.html"),
        ("../../etc/passwd", "_2e__2e__2f__2e__2e__2f_etc_2f_passwd.html"),
    ],
)
def test_pages_file_name_is_a_plain_file_name(type_name, expected):
    assert pages.file_name(type_name) == expected
    assert re.fullmatch(r"[A-Za-z0-9_.-]+\.html", expected)


def test_pages_file_names_differ_for_names_that_differ():
    names = [
        "A::B",
        "A.B",
        "A_2e_B",
        "A::B::C",
        "A::B.C",
        "A.B::C",
        "A-B",
        "A:B",
        "A::::B",
        "index",
        "_index",
        "Index",
    ]
    assert len({pages.file_name(name) for name in names}) == len(names)


def test_pages_index_groups_types_by_namespace_and_links_each_page():
    described = [
        {"resource_type": "OS::Nova::Server", "description": "A server."},
        {"resource_type": "AWS::EC2::Instance", "description": HOSTILE},
        {"resource_type": "OS::Nova::KeyPair", "description": ""},
        {"resource_type": "Plain", "description": "No namespace."},
    ]
    assert [namespace for namespace, _ in grouped(described)] == ["AWS::EC2", "OS::Nova", "Plain"]
    assert namespace_of("OS::Neutron::TaaS::TapFlow") == "OS::Neutron::TaaS"
    served = pages.index_page(described, pages.SERVED_LINKS)
    assert 'href="./OS%3A%3ANova%3A%3AServer"' in served and "<script>alert" not in served
    static = pages.index_page(described, pages.STATIC_LINKS)
    assert 'href="OS.Nova.KeyPair.html"' in static and 'src="_static/typedocs.js"' in static
    assert "4 resource types" in static


def test_pages_assets_are_the_packaged_files_only():
    assert b"type-search" in pages.asset("typedocs.js")
    assert pages.asset("typedocs.css").startswith(b"/*")
    with pytest.raises(KeyError):
        pages.asset("../pages.py")
