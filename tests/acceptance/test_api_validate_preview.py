"""Template validate, stack preview and stack outputs as Heat answers them, through a real
``stoker serve`` and the real python-heatclient (and ``openstack``, and ``stoker``).

The expectations come from Heat: ``heat/engine/service.py`` (validate_template builds the
stack with ``strict_validate=False``; preview_stack), ``heat/engine/api.py``
(format_validate_parameter, format_stack_preview, format_stack_output), its unit tests
(``heat/tests/test_validate.py``: test_validate_parameter_group_output) and its functional
tests (``heat_integrationtests/functional/test_preview.py``: StackPreviewTest).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from tests.support import server as server_process
from tests.support.waiting import settled, wait_for_stack

STOKER = str(Path(sys.executable).with_name("stoker"))
OPENSTACK = str(Path(sys.executable).with_name("openstack"))

# A template create could not take as it is: a parameter without a value, and a default
# that only a cloud could judge (a custom constraint).
NEEDS_VALUES = """
heat_template_version: 2021-04-16
parameters:
  name:
    type: string
  flavor:
    type: string
    default: m1.nope
    constraints:
      - custom_constraint: nova.flavor
resources:
  holder:
    type: OS::Heat::Value
    properties:
      value: {get_param: name}
outputs:
  held:
    value: {get_attr: [holder, value]}
"""

EMPTY_ENVIRONMENT = {"event_sinks": [], "parameter_defaults": {}, "parameters": {}, "resource_registry": {"resources": {}}}

# heat_integrationtests/functional/test_preview.py
PREVIEW = """
heat_template_version: 2015-04-30
parameters:
  incomming:
    type: string
resources:
  one:
    type: OS::Heat::TestResource
    properties:
      value: fred
  two:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: incomming}
    depends_on: one
outputs:
  main_out:
    value: {get_attr: [two, output]}
"""
PREVIEW_ENVIRONMENT = "parameters:\n  incomming: abc\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[server_process.Server]:
    directory = tmp_path_factory.mktemp("validate")
    running = server_process.Server(f"sqlite:///{directory / 'api.sqlite'}", directory / "api.log").start()
    yield running
    running.stop()


@pytest.fixture
def heat(server):
    return heat_client.Client("1", endpoint=server.endpoint, token="any-token")


# -- validate ---------------------------------------------------------------------------


def test_validate_needs_no_parameter_values_and_judges_no_custom_constraint(heat):
    """Heat's validate: no value needed, no default checked against a custom constraint;
    no ParameterGroups key without groups; the environment as Heat's user_env_as_dict."""
    assert heat.stacks.validate(template=NEEDS_VALUES) == {
        "Description": "No description",
        "Parameters": {
            "name": {"Type": "String", "Description": "", "NoEcho": "false", "Label": "name"},
            "flavor": {
                "Type": "String",
                "Description": "",
                "NoEcho": "false",
                "Label": "flavor",
                "Default": "m1.nope",
                "CustomConstraint": "nova.flavor",
            },
        },
        "Environment": EMPTY_ENVIRONMENT,
    }


def test_validate_value_only_for_a_parameter_the_environment_sets(heat):
    """format_validate_parameter: ``Value`` is the user value (the environment's
    parameters, with the request's merged in, as Heat's InstantiationData.environment());
    a parameter_default replaces ``Default`` and is no ``Value``."""
    result = heat.stacks.validate(
        template=NEEDS_VALUES,
        environment={"parameter_defaults": {"flavor": "m1.small"}},
        parameters={"name": "bob"},
    )
    assert result["Parameters"]["name"]["Value"] == "bob"
    assert result["Parameters"]["flavor"]["Default"] == "m1.small"
    assert "Value" not in result["Parameters"]["flavor"]
    assert result["Environment"] == {
        "event_sinks": [],
        "parameter_defaults": {"flavor": "m1.small"},
        "parameters": {"name": "bob"},
        "resource_registry": {"resources": {}},
    }


def test_validate_parameter_groups_nested_parameters_and_registry(heat):
    """heat/tests/test_validate.py test_validate_parameter_group_output, with the nested
    template in ``files`` instead of at a URL."""
    root = """
heat_template_version: 2015-10-15
parameters:
    test_root_param:
        type: string
parameter_groups:
-   label: RootTest
    parameters:
    -   test_root_param
resources:
    Nested:
        type: OS::Test::TestResource
"""
    nested = """
heat_template_version: 2015-10-15
parameters:
    test_param:
        type: string
parameter_groups:
-   label: Test
    parameters:
    -   test_param
"""
    result = heat.stacks.validate(
        template=yaml.safe_load(root),
        files={"nested.template": nested},
        environment={"resource_registry": {"OS::Test::TestResource": "nested.template"}},
        show_nested=True,
    )
    assert result == {
        "Description": "No description",
        "ParameterGroups": [{"label": "RootTest", "parameters": ["test_root_param"]}],
        "Parameters": {"test_root_param": {"Description": "", "Label": "test_root_param", "NoEcho": "false", "Type": "String"}},
        "NestedParameters": {
            "Nested": {
                "Description": "No description",
                "ParameterGroups": [{"label": "Test", "parameters": ["test_param"]}],
                "Parameters": {"test_param": {"Description": "", "Label": "test_param", "NoEcho": "false", "Type": "String"}},
                "Type": "OS::Test::TestResource",
            }
        },
        "Environment": {
            "event_sinks": [],
            "parameter_defaults": {},
            "parameters": {},
            "resource_registry": {"OS::Test::TestResource": "nested.template", "resources": {}},
        },
    }


def test_validate_environment_names_the_template_files_used_as_types(heat):
    """Heat's registry records a template file used as a type (``inner.yaml``) when the
    stack asks it for that type, so the validate Environment shows it."""
    outer = {"heat_template_version": "2021-04-16", "resources": {"child": {"type": "inner.yaml"}}}
    inner = "heat_template_version: 2021-04-16\nparameters:\n  size: {type: number, default: 2}\n"
    result = heat.stacks.validate(template=outer, files={"inner.yaml": inner})
    assert result["Environment"]["resource_registry"] == {"inner.yaml": "inner.yaml", "resources": {}}


def test_validate_openstack_command_lints_a_template_with_required_parameters(server, tmp_path):
    template = tmp_path / "needs.yaml"
    template.write_text(NEEDS_VALUES)
    command = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", server.endpoint, "orchestration", "template", "validate", "-t", str(template), "-f", "json"]
    validated = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert validated.returncode == 0, validated.stderr
    assert json.loads(validated.stdout)["Parameters"]["name"] == {"Type": "String", "Description": "", "NoEcho": "false", "Label": "name"}


def test_validate_stoker_command_says_what_create_would_need(server, tmp_path):
    """The CLI answers as the API: not an error; what create needs is a note, the same
    from the server (``with_notes``) as from the embedded engine."""
    template = tmp_path / "needs.yaml"
    template.write_text(NEEDS_VALUES)
    env = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}"}
    validated = subprocess.run([STOKER, "template", "validate", "-t", str(template), "-f", "json"], capture_output=True, text=True, env=env, timeout=60)
    assert validated.returncode == 0, validated.stderr
    body = json.loads(validated.stdout)
    assert "ParameterGroups" not in body and body["Environment"] == EMPTY_ENVIRONMENT
    assert "NOTE: stack create needs: " in validated.stderr
    assert "parameters.name: The Parameter (name) was not provided." in validated.stderr
    command = [STOKER, "--url", server.endpoint, "template", "validate", "-t", str(template), "-f", "json"]
    remote = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert (remote.returncode, remote.stdout, remote.stderr) == (0, validated.stdout, validated.stderr)
    created = subprocess.run([STOKER, "stack", "create", "s", "-t", str(template)], capture_output=True, text=True, env=env, timeout=60)
    assert created.returncode != 0 and "The Parameter (name) was not provided." in created.stderr


# -- preview (heat_integrationtests/functional/test_preview.py) --------------------------


def _assert_resource(resource: dict, stack_name: str, tenant: str) -> None:
    assert resource["stack_name"] == stack_name
    assert resource["resource_action"] == "INIT"
    assert resource["resource_status"] == "COMPLETE"
    for field in ("resource_status_reason", "physical_resource_id", "description"):
        assert resource[field] == ""
    # creation_time and updated_time are None in a preview
    assert resource["creation_time"] is None and resource["updated_time"] is None
    assert "output" in resource["attributes"]
    assert resource["resource_identity"] == {"stack_name": stack_name, "stack_id": "None", "tenant": tenant, "path": f"/resources/{resource['resource_name']}"}
    assert resource["stack_identity"] == {"stack_name": stack_name, "stack_id": "None", "tenant": tenant, "path": ""}


def _assert_results(result: dict, stack_name: str) -> None:
    assert result["stack_name"] == stack_name
    assert result["disable_rollback"] is True
    assert result["id"] == "None"
    assert result["parent"] is None
    assert result["template_description"] == "No description"
    assert result["parameters"]["OS::stack_id"] == "None"
    assert result["parameters"]["OS::stack_name"] == stack_name
    assert result["parameters"]["incomming"] == "abc"


def test_preview_basic_pass(heat):
    result = heat.stacks.preview(template=PREVIEW, stack_name="previewed", disable_rollback=True, environment=PREVIEW_ENVIRONMENT).to_dict()
    _assert_results(result, "previewed")
    assert result["parameters"]["OS::project_id"] == server_process.TENANT
    assert "stack_status" not in result  # Heat's format_stack(preview=True)
    for resource in result["resources"]:
        _assert_resource(resource, "previewed", server_process.TENANT)
        assert resource["resource_type"] == "OS::Heat::TestResource"
        assert resource["properties"]["fail"] is False
        assert resource["properties"]["wait_secs"] == 0
        assert resource["properties"]["update_replace"] is False
        if resource["resource_name"] == "one":
            assert resource["properties"]["value"] == "fred"
            assert resource["required_by"] == ["two"]
        if resource["resource_name"] == "two":
            assert resource["properties"]["value"] == "abc"
            assert resource["required_by"] == []
    assert [r["resource_name"] for r in result["resources"]] == ["one", "two"]
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.stacks.get("previewed")


def test_preview_basic_fail(heat):
    wont_work = PREVIEW.replace("get_param: incomming", "get_param: missing")
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        heat.stacks.preview(template=wont_work, stack_name="previewed", disable_rollback=True, environment=PREVIEW_ENVIRONMENT)
    assert "Property error: : resources.two.properties.value: : The Parameter (missing) was not provided." in str(raised.value)


def test_preview_nested_pass(heat):
    """Nested stacks need to recurse down the stacks."""
    main = """
heat_template_version: 2015-04-30
parameters:
  incomming:
    type: string
resources:
  main:
    type: nested.yaml
    properties:
      value: {get_param: incomming}
outputs:
  main_out:
    value: {get_attr: [main, output]}
"""
    nested = """
heat_template_version: 2015-04-30
parameters:
  value:
    type: string
resources:
  nested:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: value}
outputs:
  output:
    value: {get_attr: [nested, output]}
"""
    result = heat.stacks.preview(
        disable_rollback=True, stack_name="nestpreview", template=main, files={"nested.yaml": nested}, environment=PREVIEW_ENVIRONMENT
    ).to_dict()
    _assert_results(result, "nestpreview")
    # nested resources return a list of their resources.
    resource = result["resources"][0][0]
    nested_stack_name = f"nestpreview-{resource['parent_resource']}"
    _assert_resource(resource, nested_stack_name, server_process.TENANT)
    assert resource["resource_type"] == "OS::Heat::TestResource"
    assert resource["properties"]["value"] == "abc"
    assert resource["required_by"] == []


# -- outputs fail lazily ----------------------------------------------------------------


def test_stack_with_outputs_that_cannot_be_computed_is_created(heat):
    """format_stack_output: an output that fails is an ``output_error`` beside a None
    value; the stack, its other outputs and the resources that read the same nested
    stack are fine. Read through a nested stack, the error is Heat's TemplateOutputError
    ``Error in <resource> output <name>: <the nested stack's output_error>``."""
    inner = textwrap.dedent(
        """
        heat_template_version: 2021-04-16
        resources:
          r:
            type: OS::Heat::Value
            properties: {value: abc}
        outputs:
          x:
            value: {list_join: [",", {get_attr: [r, value]}]}
          y:
            value: {get_attr: [r, value]}
        """
    )
    outer = textwrap.dedent(
        """
        heat_template_version: 2021-04-16
        resources:
          parent:
            type: inner.yaml
          user:
            type: OS::Heat::Value
            properties: {value: {get_attr: [parent, y]}}
        outputs:
          via:
            value: {get_attr: [parent, x]}
          direct:
            value: {str_split: [",", {get_attr: [user, value]}, 5]}
          ok:
            value: {get_attr: [user, value]}
        """
    )
    heat.stacks.create(stack_name="lazy", template=outer, files={"inner.yaml": inner})
    stack = wait_for_stack(heat, "lazy")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o for o in stack.outputs}
    assert outputs["ok"] == {"output_key": "ok", "description": "No description given", "output_value": "abc"}
    assert outputs["via"]["output_value"] is None
    assert outputs["via"]["output_error"].startswith("Error in parent output x: ")
    assert outputs["direct"]["output_value"] is None and outputs["direct"]["output_error"]
    shown = heat.stacks.output_show("lazy", "via")["output"]
    assert shown["output_error"] == outputs["via"]["output_error"]
    nested = [s for s in heat.stacks.list(show_nested=True) if s.stack_name.startswith("lazy-parent")]
    assert len(nested) == 1 and nested[0].stack_status == "CREATE_COMPLETE"
    own = {o["output_key"]: o for o in heat.stacks.get(nested[0].id).outputs}
    assert outputs["via"]["output_error"] == f"Error in parent output x: {own['x']['output_error']}"
    assert own["y"]["output_value"] == "abc"


# -- Heat's own words, where its clients match them --------------------------------------

REMOTE_PARENT = """\
heat_template_version: 2013-05-23
resources:
  my_stack:
    type: OS::Heat::Stack
    properties:
      context:
        region_name: {region}
      template: {{get_file: remote_stack.yaml}}
"""
REMOTE_CHILD = """\
heat_template_version: 2013-05-23
resources:
  random1:
    type: OS::Heat::RandomString
outputs:
  remote_key:
    value: {get_attr: [random1, value]}
"""


def test_an_unknown_template_version_is_heats_invalid_template_version(server):
    """Heat's InvalidTemplateVersion: 'The template version is invalid: ...' (its
    clients match the start); stoker's place and the known versions follow in the hint."""
    answer = httpx.post(f"{server.endpoint}/validate", json={"template": "heat_template_version: invalid\nresources: {}\n"}, headers={"X-Auth-Token": "t"})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["type"] == "InvalidTemplateVersion"
    assert "The template version is invalid: " in error["message"]
    assert "template:1:24: heat_template_version" in error["message"]  # stoker's place is kept


def test_remote_stack_errors_are_heats_text_word_for_word(heat):
    """heat-tempest-plugin matches these two messages exactly (test_remote_stack): the
    place and hint that stoker adds elsewhere would break them, so the API sends Heat's
    text alone."""
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        heat.stacks.create(stack_name="far", template=REMOTE_PARENT.format(region="DARKHOLE"), files={"remote_stack.yaml": REMOTE_CHILD})
    assert str(refused.value) == (
        'ERROR: Cannot establish connection to Heat endpoint at region "DARKHOLE" due to '
        '"publicURL endpoint for orchestration service in DARKHOLE region not found"'
    )
    broken = REMOTE_CHILD.replace("resources", "resource")
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        heat.stacks.create(stack_name="broken", template=REMOTE_PARENT.format(region="RegionOne"), files={"remote_stack.yaml": broken})
    assert str(refused.value) == (
        'ERROR: Failed validating stack template using Heat endpoint at region "RegionOne" due to '
        '"ERROR: The template section is invalid: resource"'
    )
    # Heat's message stops at the first problem; stoker's details list each, placed.
    body = httpx.post(f"{heat.http_client.endpoint}/stacks", json={"stack_name": "broken", "template": REMOTE_PARENT.format(region="RegionOne"), "files": {"remote_stack.yaml": broken}}, headers={"X-Auth-Token": "t"}).json()
    details = body["error"]["details"].splitlines()
    assert details[1].strip().startswith("- remote_stack.yaml:3:3: resource: The template section is invalid: resource")
    assert details[2].strip().startswith("- remote_stack.yaml:") and "random1" in details[2]
    # A problem that is not Heat's verbatim text keeps stoker's place and hint.
    with pytest.raises(heat_exc.HTTPBadRequest) as refused:
        heat.stacks.create(stack_name="other", template="heat_template_version: 2013-05-23\nresources:\n  r: {type: OS::Heat::RandomString, properties: {lenght: 3}}\n")
    assert "resources.r.properties" in str(refused.value) and "lenght" in str(refused.value)


def test_an_output_reading_a_parameter_the_template_lacks_fails_lazily(heat):
    """Heat's get_param checks nothing until it resolves: a nested template whose output
    reads an undeclared parameter is created and updated, and the parent's output that
    reads it shows Heat's error (heat-tempest-plugin's test_output_error_nested)."""
    child = textwrap.dedent(
        """
        heat_template_version: 2015-10-15
        resources:
          a: {type: OS::Heat::TestResource, properties: {value: a}}
        outputs:
          out_a: {value: {get_attr: [a, output]}}
          out_b: {value: {get_param: foo}}
        """
    )
    parent = textwrap.dedent(
        """
        heat_template_version: 2015-10-15
        resources:
          parent: {type: 1.yaml}
        outputs:
          a: {value: {get_attr: [parent, out_a]}, description: parent a}
          b: {value: {get_attr: [parent, out_b]}, description: parent b}
        """
    )
    heat.stacks.create(stack_name="undeclared", template=parent, files={"1.yaml": child})
    assert wait_for_stack(heat, "undeclared").stack_status == "CREATE_COMPLETE"
    heat.stacks.update("undeclared", template=parent, files={"1.yaml": child})
    stack = wait_for_stack(heat, "undeclared", lambda s: s.startswith("UPDATE") and settled(s))
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert sorted(stack.outputs, key=lambda o: o["output_key"]) == [
        {"output_key": "a", "output_value": "a", "description": "parent a"},
        {"output_key": "b", "output_value": None, "description": "parent b", "output_error": "Error in parent output out_b: The Parameter (foo) was not provided."},
    ]


RANDOM_TEMPLATE = """
heat_template_version: 2014-10-16
description: the stack description
parameters:
  aparam:
    type: number
    default: 10
    description: the param description
resources:
  myres:
    type: OS::Heat::RandomString
    properties:
      length: {get_param: aparam}
"""
NESTED_PARENT = """
heat_template_version: 2014-10-16
description: the parent template
parameters:
  pparam:
    type: number
    default: 5
    description: the param description
resources:
  nres:
    type: mynested.yaml
    properties:
      aparam: {get_param: pparam}
"""


def test_validate_does_not_hold_template_resources_to_their_parameters(heat):
    """Heat's template-validate checks resource templates only (validate_res_tmpl_only):
    a template resource given a property its template has no parameter for is shown,
    nested parameters and all, not refused (heat-tempest-plugin's
    test_template_validate_nested_on_multiple); create refuses it."""
    nested = RANDOM_TEMPLATE.replace("OS::Heat::RandomString", "mynested2.yaml")
    files = {"mynested.yaml": nested, "mynested2.yaml": RANDOM_TEMPLATE}
    shown = heat.stacks.validate(template=NESTED_PARENT, files=files, show_nested=True)
    aparam = {"Default": 10, "Description": "the param description", "Label": "aparam", "NoEcho": "false", "Type": "Number"}
    assert shown == {
        "Description": "the parent template",
        "Parameters": {"pparam": {"Default": 5, "Description": "the param description", "Label": "pparam", "NoEcho": "false", "Type": "Number"}},
        "NestedParameters": {
            "nres": {
                "Description": "the stack description",
                "Parameters": {"aparam": {**aparam, "Value": 5}},
                "NestedParameters": {"myres": {"Description": "the stack description", "Parameters": {"aparam": aparam}, "Type": "mynested2.yaml"}},
                "Type": "mynested.yaml",
            }
        },
        "Environment": {"event_sinks": [], "parameter_defaults": {}, "parameters": {}, "resource_registry": {"mynested.yaml": "mynested.yaml", "resources": {}}},
    }
    with pytest.raises(heat_exc.HTTPBadRequest, match="Unknown Property length"):
        heat.stacks.create(stack_name="typo", template=NESTED_PARENT, files=files)
    # A plugin's unknown property is a typo validate reports.
    with pytest.raises(heat_exc.HTTPBadRequest, match="Unknown Property lenght"):
        heat.stacks.validate(template=RANDOM_TEMPLATE.replace("length:", "lenght:"))


def test_preview_shows_a_group_as_its_members_nested_stacks(heat):
    """Heat previews a stack resource as the resources of its nested stack: a group of
    one template member is ``[[port]]`` in the group's place, even while the member's
    property reads a resource not created yet (heat-tempest-plugin's
    test_res_group_with_nested_template). No cloud is asked: the port's network is not
    known, so there is nothing to look up."""
    main = textwrap.dedent(
        """
        heat_template_version: 2015-04-30
        resources:
          fixed_network:
            type: OS::Neutron::Net
          rg:
            type: OS::Heat::ResourceGroup
            properties:
              count: 1
              resource_def:
                type: nested.yaml
                properties:
                  fixed_network_id: {get_resource: fixed_network}
        """
    )
    nested = textwrap.dedent(
        """
        heat_template_version: 2015-04-30
        parameters:
          fixed_network_id:
            type: string
        resources:
          port:
            type: OS::Neutron::Port
            properties:
              network_id: {get_param: fixed_network_id}
        """
    )
    result = heat.stacks.preview(stack_name="grouped", template=main, files={"nested.yaml": nested}, disable_rollback=True).to_dict()

    def names(resources):
        return [names(item) if isinstance(item, list) else item["resource_name"] for item in resources]

    assert names(result["resources"]) == ["fixed_network", [["port"]]]
    [[port]] = result["resources"][1]
    assert port["parent_resource"] == "0" and port["stack_name"].startswith("grouped-rg")
