"""Software configs without an engine: Heat's input/output normalisation, CloudConfig's
rendering, and MultipartMime's message (parsed back with the ``email`` package)."""

from __future__ import annotations

import email

import pytest
import yaml

from stoker.resources.heat.cloud_config import render_cloud_config
from stoker.resources.heat.multi_part import build_message, text_part
from stoker.resources.heat.software_config import SoftwareConfig, config_by_reference, is_uuid_like
from stoker.sdk.exceptions import StokerError, ValidationError
from stoker.sdk.software_config import (
    MemorySoftwareConfigs,
    SoftwareConfigNotFoundError,
    config_body,
)
from stoker.template.definitions import ResourceDefinition

# -- inputs and outputs, as Heat's software_config_io stores them -------------------------


def test_config_body_input_with_name_only_gets_string_type():
    assert config_body(inputs=[{"name": "foo"}])["inputs"] == [{"name": "foo", "type": "String"}]


def test_config_body_output_with_name_only_gets_type_and_error_output():
    assert config_body(outputs=[{"name": "out"}])["outputs"] == [{"name": "out", "type": "String", "error_output": False}]


def test_config_body_input_keeps_replace_on_change_only_when_true():
    body = config_body(inputs=[{"name": "a", "replace_on_change": False}, {"name": "b", "description": "d", "type": "Number", "default": 0, "replace_on_change": True}])
    assert body["inputs"] == [
        {"name": "a", "type": "String"},
        {"name": "b", "description": "d", "type": "Number", "default": 0, "replace_on_change": True},
    ]


def test_config_body_input_default_is_converted_to_its_type():
    body = config_body(
        inputs=[
            {"name": "n", "type": "Number", "default": "1.5"},
            {"name": "l", "type": "CommaDelimitedList", "default": "a,b"},
            {"name": "b", "type": "Boolean", "default": "TRUE"},
            {"name": "j", "type": "Json", "default": {"k": 1}},
        ]
    )
    assert [item["default"] for item in body["inputs"]] == [1.5, ["a", "b"], True, {"k": 1}]


def test_config_body_input_empty_default_of_non_string_type_is_kept():
    # Heat's legacy path: defaults used to be strings.
    assert config_body(inputs=[{"name": "baz", "type": "Number", "default": ""}])["inputs"] == [{"name": "baz", "type": "Number", "default": ""}]


def test_config_body_input_null_values_take_the_empty_value_of_their_type():
    # What a resource passes for an input it gave a name only (Heat's nested properties).
    item = {"name": "foo", "description": None, "type": "Number", "default": None, "replace_on_change": False}
    assert config_body(inputs=[item])["inputs"] == [{"name": "foo", "description": "", "type": "Number", "default": 0}]


def test_config_body_input_value_is_kept():
    assert config_body(inputs=[{"name": "baz", "type": "Number", "default": 0, "value": 42}])["inputs"] == [{"name": "baz", "type": "Number", "default": 0, "value": 42}]


def test_config_body_defaults_for_missing_parts():
    assert config_body() == {"inputs": [], "outputs": [], "options": {}, "config": None}


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ("", "must be in a list"),
        ({}, "must be in a list"),
        (["foo"], "must be a dict"),
        ([None], "must be a dict"),
        ([{"type": "String"}], "inputs[0]: Property name not assigned"),
        ([{"name": "test", "bogus": "wat"}], "inputs[0]: Unknown Property bogus"),
        ([{"name": "bogus", "type": "BogusType"}], 'inputs[0].type: "BogusType" is not an allowed value'),
        ([{"name": "n", "type": "Number", "default": "many"}], "inputs[0].default: Value 'many' is not a number"),
        ([{"name": "n", "type": "Number", "default": "nan"}], "inputs[0].default: Value 'nan' is not a number"),
        ([{"name": "n", "type": "Number", "default": "1e999"}], "inputs[0].default: Value '1e999' is not a number"),
        ([{"name": "r", "replace_on_change": "maybe"}], "inputs[0].replace_on_change"),
    ],
)
def test_config_body_refuses_bad_inputs(inputs, message):
    with pytest.raises(ValidationError) as caught:
        config_body(inputs=inputs)
    assert message in str(caught.value)


def test_config_body_refuses_bad_outputs():
    with pytest.raises(ValidationError, match=r"outputs\[1\]: Unknown Property default"):
        config_body(outputs=[{"name": "ok"}, {"name": "x", "default": 1}])


def test_memory_store_create_show_delete():
    store = MemorySoftwareConfigs()
    created = store.create(name="c", group="script", config="echo", inputs=[{"name": "a"}])
    assert created == store.show(created["id"])
    assert set(created) == {"id", "name", "group", "creation_time", "config", "inputs", "outputs", "options"}
    store.delete(created["id"])
    with pytest.raises(SoftwareConfigNotFoundError, match=f"Software config with id {created['id']} not found"):
        store.show(created["id"])


# -- CloudConfig -------------------------------------------------------------------------


def test_cloud_config_renders_header_and_sorted_block_yaml():
    rendered = render_cloud_config({"runcmd": ["ls -l", "echo é"], "packages": ["vim"], "users": [{"name": "u", "groups": "wheel"}]})
    assert rendered == (
        "#cloud-config\n"
        "packages:\n- vim\n"
        'runcmd:\n- ls -l\n- "echo \\xE9"\n'
        "users:\n- groups: wheel\n  name: u\n"
    )
    assert yaml.safe_load(rendered) == {"runcmd": ["ls -l", "echo é"], "packages": ["vim"], "users": [{"name": "u", "groups": "wheel"}]}


def test_cloud_config_without_data_renders_null_as_heat_does():
    rendered = render_cloud_config(None)
    assert rendered.startswith("#cloud-config\nnull\n")
    assert yaml.safe_load(rendered) is None


# -- MultipartMime -----------------------------------------------------------------------


def test_is_uuid_like_accepts_uuid_spellings_only():
    value = "c8a19429-7fde-47ea-a42f-40045488226c"
    assert is_uuid_like(value)
    assert is_uuid_like(value.upper())
    assert is_uuid_like(value.replace("-", ""))
    assert is_uuid_like("{" + value + "}")
    assert is_uuid_like("urn:uuid:" + value)
    assert not is_uuid_like("#!/bin/sh")
    assert not is_uuid_like(value + "0")
    assert not is_uuid_like(None)


def _parse(message: str) -> list[email.message.Message]:
    parsed = email.message_from_string(message)
    assert parsed.is_multipart()
    assert parsed.get_content_type() == "multipart/mixed"
    return parsed.get_payload()


def test_multipart_message_holds_inline_and_stored_parts_in_order():
    store = MemorySoftwareConfigs()
    stored = store.create(name="s", group="script", config="#!/bin/sh\necho stored\n")
    message = build_message(
        [
            {"config": stored["id"], "type": "text", "filename": "run.sh", "subtype": "x-shellscript"},
            {"config": "#cloud-config\nruncmd: [ls]\n", "type": "text", "filename": None, "subtype": "cloud-config"},
            {"config": "héllo", "type": "text", "filename": None, "subtype": None},
        ],
        store,
    )
    first, second, third = _parse(message)
    assert first.get_content_type() == "text/x-shellscript"
    assert first.get_content_charset() == "us-ascii"
    assert first["Content-Disposition"] == 'attachment; filename="run.sh"'
    assert first.get_filename() == "run.sh"
    assert first.get_payload(decode=True).decode() == "#!/bin/sh\necho stored\n"
    assert second.get_content_type() == "text/cloud-config"
    assert second.get_filename() is None
    assert third.get_content_type() == "text/plain"
    assert third.get_content_charset() == "utf-8"
    assert third["Content-Transfer-Encoding"] == "base64"
    assert third.get_payload(decode=True).decode("utf-8") == "héllo"


def test_multipart_subtype_comes_from_the_filename_without_its_extension():
    # Heat's rule (os.path.splitext(filename)[0]), kept as Heat has it.
    (part,) = _parse(build_message([{"config": "x", "type": "text", "filename": "setup.sh", "subtype": None}], None))
    assert part.get_content_type() == "text/setup"


def test_multipart_unknown_config_id_is_used_as_text():
    missing = "c8a19429-7fde-47ea-a42f-40045488226c"
    (part,) = _parse(build_message([{"config": missing, "type": "text"}], MemorySoftwareConfigs()))
    assert part.get_payload(decode=True).decode() == missing


def test_multipart_part_of_type_multipart_is_split_into_its_parts():
    store = MemorySoftwareConfigs()
    inner = build_message(
        [{"config": "one", "type": "text", "subtype": "x-shellscript", "filename": "a.sh"}, {"config": "twö", "type": "text"}],
        None,
    )
    stored = store.create(name="inner", group="Heat::Ungrouped", config=inner)
    parts = _parse(build_message([{"config": "zero", "type": "text"}, {"config": stored["id"], "type": "multipart"}], store))
    assert [part.get_content_type() for part in parts] == ["text/plain", "text/x-shellscript", "text/plain"]
    assert [part.get_payload(decode=True).decode("utf-8") for part in parts] == ["zero", "one", "twö"]
    assert parts[1].get_filename() == "a.sh"


def test_multipart_part_of_type_multipart_that_is_not_one_adds_nothing():
    # A multipart message without parts: the parser sees one empty, headerless part.
    (empty,) = _parse(build_message([{"config": "plain words", "type": "multipart"}], None))
    assert empty.keys() == [] and empty.get_payload() == ""


def test_multipart_structured_config_cannot_be_a_part():
    store = MemorySoftwareConfigs()
    stored = store.create(name="s", group="json", config={"a": 1})
    with pytest.raises(StokerError, match=r"parts\[0\]: the config of a part must be text"):
        build_message([{"config": stored["id"], "type": "text"}], store)


def test_text_part_without_subtype_or_filename_is_plain_ascii():
    part = text_part("echo", None, None)
    assert part.get_content_type() == "text/plain"
    assert part.get_content_charset() == "us-ascii"
    assert "Content-Disposition" not in part


# -- a config resource over the SDK's in-memory store -------------------------------------


class _Stack:
    name = "unit"
    id = "00000000-0000-0000-0000-000000000001"


class _Hooks:
    """Engine hooks offering the SDK's in-memory config store."""

    def __init__(self, configs: MemorySoftwareConfigs):
        self.configs = configs
        self.physical_ids: list[str | None] = []

    def software_configs(self, resource):
        return self.configs

    def resource_id_set(self, resource, physical_id):
        self.physical_ids.append(physical_id)

    def data_changed(self, resource):
        pass


def _config_resource(configs: MemorySoftwareConfigs, properties: dict) -> SoftwareConfig:
    definition = ResourceDefinition("script", "OS::Heat::SoftwareConfig", properties).bind(lambda value: value)
    return SoftwareConfig("script", definition, _Stack(), uuid="6a1c3a4e-5b2c-4c39-9f4e-0123456789ab", hooks=_Hooks(configs))


def test_software_config_find_created_finds_the_config_stored_under_its_name():
    configs = MemorySoftwareConfigs()
    resource = _config_resource(configs, {"config": "echo"})
    assert resource.find_created() is None
    # What a create interrupted after storing its config, before recording the id, left.
    stored = configs.create(name=resource.physical_resource_name(), group="Heat::Ungrouped", config="echo")
    configs.create(name="someone-else", group=None, config="x")
    assert resource.find_created() == stored["id"]


def test_config_by_reference_reads_a_stored_config_and_leaves_anything_else():
    configs = MemorySoftwareConfigs()
    resource = _config_resource(configs, {})
    stored = configs.create(name="s", group=None, config="#!/bin/sh")
    assert config_by_reference(resource, stored["id"]) == "#!/bin/sh"
    assert config_by_reference(resource, "#!/bin/sh\necho") == "#!/bin/sh\necho"
    missing = "c8a19429-7fde-47ea-a42f-40045488226c"
    assert config_by_reference(resource, missing) == missing


def test_software_config_without_a_config_store_says_so():
    definition = ResourceDefinition("script", "OS::Heat::SoftwareConfig", {}).bind(lambda value: value)
    resource = SoftwareConfig("script", definition, _Stack(), uuid="6a1c3a4e-5b2c-4c39-9f4e-0123456789ab")
    with pytest.raises(StokerError, match="needs the engine's software config store"):
        resource.handle_create()
    resource.resource_id = "c8a19429-7fde-47ea-a42f-40045488226c"
    assert resource.get_attribute("config") is None
