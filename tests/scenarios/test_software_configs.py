"""Software configuration types through the engine: create stores a config (the
resource's physical id is its id), any property change replaces it (a new config,
the old one deleted), delete removes it, and the ``config`` attribute reads it back."""

from __future__ import annotations

import email

import pytest
import yaml

from stoker.template.errors import TemplateErrors
from tests.support.stacks import event_states, states, template

CONFIGS = """
heat_template_version: 2021-04-16
resources:
  script:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      config: |
        #!/bin/sh
        echo hello
      inputs:
      - name: foo
      - name: count
        type: Number
        default: "3"
        replace_on_change: true
      outputs:
      - name: result
        error_output: true
      options: {retries: 2}
  structured:
    type: OS::Heat::StructuredConfig
    properties:
      group: json-file
      config:
        /etc/app.json: {port: 80}
  cloud:
    type: OS::Heat::CloudConfig
    properties:
      cloud_config:
        packages: [vim]
        runcmd: [ls]
  mime:
    type: OS::Heat::MultipartMime
    properties:
      parts:
      - config: {get_resource: cloud}
      - config: {get_resource: script}
        filename: boot.sh
        subtype: x-shellscript
      - config: inline words
  component:
    type: OS::Heat::SoftwareComponent
    properties:
      configs:
      - tool: script
        config: echo create
      - actions: [DELETE]
        tool: script
        config: echo delete
      inputs: [{name: x}]
outputs:
  script: {value: {get_attr: [script, config]}}
  structured: {value: {get_attr: [structured, config]}}
  cloud: {value: {get_attr: [cloud, config]}}
  mime: {value: {get_attr: [mime, config]}}
  component: {value: {get_attr: [component, config]}}
  script_show: {value: {get_attr: [script, show]}}
"""

TYPES = {
    "script": "OS::Heat::SoftwareConfig",
    "structured": "OS::Heat::StructuredConfig",
    "cloud": "OS::Heat::CloudConfig",
    "mime": "OS::Heat::MultipartMime",
    "component": "OS::Heat::SoftwareComponent",
}


def physical_ids(service, name):
    return {r.name: r.physical_resource_id for r in service.list_resources(name)}


def stored(service, config_id):
    record = service.store.software_configs.get_software_config(config_id)
    assert record is not None, f"no config {config_id}"
    return record


def outputs(service, name):
    return {o["output_key"]: o["output_value"] for o in service.outputs(name)}


def test_software_configs_create_stores_each_config_as_heat_does(service):
    stack = service.create_stack("sc", template(CONFIGS))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, "sc")
    assert set(ids) == set(TYPES)
    records = {name: stored(service, config_id) for name, config_id in ids.items()}
    for name, record in records.items():
        assert record.name.startswith(f"sc-{name}-"), record.name  # the physical resource name

    script = records["script"]
    assert script.group == "script"
    assert script.config == {
        "config": "#!/bin/sh\necho hello\n",
        # What the resource passes for keys it did not give is Heat's null, read as the
        # empty value of its type when stored.
        "inputs": [
            {"name": "foo", "description": "", "type": "String", "default": ""},
            {"name": "count", "description": "", "type": "Number", "default": 3, "replace_on_change": True},
        ],
        "outputs": [{"name": "result", "description": "", "type": "String", "error_output": True}],
        "options": {"retries": 2},
    }
    assert records["structured"].group == "json-file"
    assert records["structured"].config == {"config": {"/etc/app.json": {"port": 80}}, "inputs": [], "outputs": [], "options": {}}
    assert records["cloud"].group == "Heat::Ungrouped"
    assert records["cloud"].config["config"] == "#cloud-config\npackages:\n- vim\nruncmd:\n- ls\n"
    assert records["component"].group == "component"
    assert records["component"].config["config"] == {
        "configs": [
            {"actions": ["CREATE", "UPDATE"], "config": "echo create", "tool": "script"},
            {"actions": ["DELETE"], "config": "echo delete", "tool": "script"},
        ]
    }
    assert records["component"].config["inputs"] == [{"name": "x", "description": "", "type": "String", "default": ""}]

    values = outputs(service, "sc")
    assert values["script"] == "#!/bin/sh\necho hello\n"
    # ``show``: the config as the software_configs API shows it.
    assert values["script_show"] == {
        "id": ids["script"], "name": script.name, "group": "script", "creation_time": values["script_show"]["creation_time"], **script.config,
    }
    assert values["structured"] == {"/etc/app.json": {"port": 80}}
    assert yaml.safe_load(values["cloud"]) == {"packages": ["vim"], "runcmd": ["ls"]}
    assert values["component"] == records["component"].config["config"]

    # The message holds the stored configs the parts name, in order.
    assert values["mime"] == records["mime"].config["config"]
    cloud_part, script_part, inline_part = email.message_from_string(values["mime"]).get_payload()
    assert cloud_part.get_payload() == records["cloud"].config["config"]
    assert script_part.get_content_type() == "text/x-shellscript"
    assert script_part.get_filename() == "boot.sh"
    assert script_part.get_payload() == "#!/bin/sh\necho hello\n"
    assert inline_part.get_content_type() == "text/plain"
    assert inline_part.get_payload() == "inline words"


def test_software_configs_every_property_change_replaces_the_config(service):
    service.create_stack("sc", template(CONFIGS))
    before = physical_ids(service, "sc")
    changed = CONFIGS.replace("echo hello", "echo changed").replace("packages: [vim]", "packages: [emacs]")
    stack = service.update_stack("sc", template(changed))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, "sc")
    # script and cloud changed; mime names both, so its parts changed too.
    for name in ("script", "cloud", "mime"):
        assert after[name] != before[name], name
        assert service.store.software_configs.get_software_config(before[name]) is None, f"{name}: the old config is deleted"
        assert stored(service, after[name]) is not None
    for name in ("structured", "component"):
        assert after[name] == before[name], name
        assert event_states(service, "sc", name) == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    assert outputs(service, "sc")["script"] == "#!/bin/sh\necho changed\n"
    assert "echo changed" in outputs(service, "sc")["mime"]
    assert "emacs" in outputs(service, "sc")["mime"]


@pytest.mark.parametrize(
    ("name", "old", "new", "replaced"),
    [
        # mime's parts name script: a new script means a new reference, so a new message.
        ("script", "group: script", "group: other", {"script", "mime"}),
        ("script", "name: foo", "name: bar", {"script", "mime"}),
        ("structured", "port: 80", "port: 81", {"structured"}),
        ("component", "tool: script\n        config: echo create", "tool: puppet\n        config: echo create", {"component"}),
        ("mime", "config: inline words", "config: other words", {"mime"}),
    ],
)
def test_software_configs_change_of_one_property_replaces_only_that_config(service, name, old, new, replaced):
    service.create_stack("sc", template(CONFIGS))
    before = physical_ids(service, "sc")
    assert CONFIGS.count(old) == 1
    stack = service.update_stack("sc", template(CONFIGS.replace(old, new)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, "sc")
    assert {key for key in after if after[key] != before[key]} == replaced
    assert service.store.software_configs.get_software_config(before[name]) is None
    reason = next(e.resource_status_reason for e in service.list_events("sc", name) if "Replacing" in e.resource_status_reason)
    assert reason


def test_software_configs_delete_removes_every_config(service):
    service.create_stack("sc", template(CONFIGS))
    ids = physical_ids(service, "sc")
    stack = service.delete_stack("sc")
    assert stack.state == "DELETE_COMPLETE", stack.status_reason
    assert all(service.store.software_configs.get_software_config(config_id) is None for config_id in ids.values())
    assert service.store.software_configs.list_software_configs() == []


def test_software_configs_delete_tolerates_a_config_already_gone(service):
    service.create_stack("sc", template(CONFIGS))
    ids = physical_ids(service, "sc")
    assert service.store.software_configs.delete_software_config(ids["script"])
    stack = service.delete_stack("sc")
    assert stack.state == "DELETE_COMPLETE", stack.status_reason
    assert service.store.software_configs.list_software_configs() == []


def test_software_config_attribute_is_read_from_the_store_and_none_when_gone(service):
    # No output reads the attributes, so none was stored with the resources: they are
    # read from the config store when asked.
    unread = CONFIGS[: CONFIGS.index("\noutputs:")]
    stack = service.create_stack("sc", template(unread))
    ids = physical_ids(service, "sc")
    assert service.resource_attributes(stack, "structured")["config"] == {"/etc/app.json": {"port": 80}}
    service.store.software_configs.delete_software_config(ids["structured"])
    # Heat's resource show: the attribute of a config that is gone is null.
    assert service.resource_attributes(stack, "structured")["config"] is None
    assert service.resource_attributes(stack, "script")["config"] == "#!/bin/sh\necho hello\n"


def test_multipart_mime_uses_a_config_made_by_another_stack(service):
    service.create_stack("first", template(CONFIGS))
    script_id = physical_ids(service, "first")["script"]
    other = """
heat_template_version: 2021-04-16
parameters:
  config_id: {type: string}
resources:
  mime:
    type: OS::Heat::MultipartMime
    properties:
      parts: [{config: {get_param: config_id}, subtype: x-shellscript}]
outputs:
  mime: {value: {get_attr: [mime, config]}}
"""
    stack = service.create_stack("second", template(other), parameters={"config_id": script_id})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    (part,) = email.message_from_string(outputs(service, "second")["mime"]).get_payload()
    assert part.get_content_type() == "text/x-shellscript"
    assert part.get_payload() == "#!/bin/sh\necho hello\n"


def test_software_config_input_default_of_wrong_type_fails_create(service):
    bad = CONFIGS.replace('default: "3"', "default: three")
    stack = service.create_stack("sc", template(bad))
    assert stack.state == "CREATE_FAILED"
    assert "Value 'three' is not a number" in stack.status_reason
    assert states(service, "sc")["script"] == "CREATE_FAILED"


def test_software_component_refuses_two_configs_for_one_action(service):
    bad = CONFIGS.replace("actions: [DELETE]", "actions: [DELETE, UPDATE]")
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("sc", template(bad))
    assert 'Defining more than one configuration for the same action in SoftwareComponent "component" is not allowed.' in str(caught.value)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("type: Number", "type: Integer", "Integer"),
        ("- name: foo", "- description: no name", "name"),
        ("configs:\n      - tool: script\n        config: echo create\n      - actions: [DELETE]\n        tool: script\n        config: echo delete", "configs: []", "configs"),
        ("- config: inline words", "- config: inline words\n        type: binary", "binary"),
    ],
)
def test_software_config_properties_are_validated(service, old, new, message):
    assert old in CONFIGS
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("sc", template(CONFIGS.replace(old, new)))
    assert message in str(caught.value)


def test_software_configs_are_imported_by_the_id_they_had(make_service):
    """Every config type made, its stack abandoned (the configs stay), then imported into a
    new stack by their ids: nothing made, no drift, an update touches none, the delete
    deletes them."""
    from tests.cloud.test_import_round_trip import round_trip

    service = make_service(enable_stack_abandon=True)

    def count() -> dict[str, int]:
        return {"configs": len(service.store.software_configs.list_software_configs())}

    round_trip(service, yaml.safe_load(CONFIGS), "rt-configs", count)
