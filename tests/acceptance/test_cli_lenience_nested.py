"""Heat's lenience that real templates rely on (issue 27), the rest of it, through the
``stoker`` command, embedded and against a server: a get_param of a parameter the
template lacks in an ``if`` branch not taken is a warning (taken, an error), and the
warnings of nested templates (a HIDDEN type, a deprecated property, used inside a
template resource) reach the parent's template validate and stack create output, with
the nested template's name."""

from __future__ import annotations

import json

from tests.acceptance.test_cli import run, write  # noqa: F401 - run is a fixture

PARAMETER_IN_A_BRANCH = """\
heat_template_version: 2016-10-14
parameters:
  big: {type: boolean, default: false}
conditions:
  is_big: {get_param: big}
resources:
  size:
    type: OS::Heat::Value
    properties:
      value: {if: [is_big, {get_param: NotDeclaredHere}, small]}
outputs:
  size: {value: {get_attr: [size, value]}}
"""


def test_cli_lenience_get_param_of_an_undeclared_parameter_in_a_branch_not_taken(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "branch.yaml", PARAMETER_IN_A_BRANCH)

    validated = run("template", "validate", "-t", path)
    created = json.loads(run("stack", "create", "branch", "-t", path, "--wait", "-f", "json").stdout)

    assert "The Parameter (NotDeclaredHere) was not defined in template. It is in a branch of an if" in validated.stderr
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {"size": "small"}
    # Taken, the branch is refused when the template is read with the parameters, placed.
    refused = run("stack", "create", "taken", "-t", path, "--parameter", "big=true", check=False)
    assert refused.returncode != 0
    assert "resources.size.properties.value.if[1]: The Parameter (NotDeclaredHere) was not defined in template." in refused.stderr


GRANDCHILD = """\
heat_template_version: 2021-04-16
resources:
  random:
    type: OS::Heat::RandomString
    properties: {sequence: lettersdigits}
"""

WARNED_CHILD = """\
heat_template_version: 2021-04-16
parameters:
  router: {type: string, default: ""}
conditions:
  with_gateway: {not: {equals: [{get_param: router}, ""]}}
resources:
  grand: {type: grandchild.yaml}
  gateway:
    type: OS::Neutron::RouterGateway
    condition: with_gateway
    properties: {router_id: {get_param: router}, network: public}
"""


def test_cli_lenience_warnings_of_nested_templates_reach_the_parent(run, tmp_path):  # noqa: F811
    write(tmp_path, "grandchild.yaml", GRANDCHILD)
    write(tmp_path, "child.yaml", WARNED_CHILD)
    path = write(tmp_path, "parent.yaml", "heat_template_version: 2021-04-16\nresources:\n  child: {type: child.yaml, properties: {router: r1}}\n")

    validated = run("template", "validate", "-t", path)

    hidden = "resources.random.properties.sequence: property sequence is HIDDEN since 5.0.0: Use property character_classes."
    warnings = [line for line in validated.stderr.splitlines() if line.startswith("WARNING: ")]
    assert f"WARNING: resources.child: nested stack child.yaml: resources.grand: nested stack grandchild.yaml: {hidden}" in warnings, validated.stderr
    assert any(
        line.startswith("WARNING: resources.child: nested stack child.yaml: resources.gateway.type: resource type OS::Neutron::RouterGateway is HIDDEN since 5.0.0")
        for line in warnings
    ), validated.stderr
    # A create tells them in the parent's output too, on the resource that makes the stack.
    write(tmp_path, "parent.yaml", "heat_template_version: 2021-04-16\nresources:\n  child: {type: child.yaml}\n")
    created = run("stack", "create", "warned", "-t", path, "--wait")
    assert f"[child]: CREATE_IN_PROGRESS  Warning: nested stack child.yaml: resources.grand: nested stack grandchild.yaml: {hidden}" in created.stderr
    events = run("stack", "event", "list", "warned").stdout
    assert "Warning: nested stack child.yaml: resources.grand: nested stack grandchild.yaml" in events
