"""Heat's lenience that real templates rely on (issue 27), as a user meets it through the
``stoker`` command, embedded and against a server: what Heat accepts validates (with a
warning where an author may not mean it) and runs; what Heat reports lazily is an output's
error; values not known at validation are never an internal error."""

from __future__ import annotations

import json

from tests.acceptance.test_cli import run, write  # noqa: F401 - run is a fixture

# Each thing Heat accepts that stoker refused before, in one template (TripleO's and
# older templates have all of them).
LENIENT = """\
heat_template_version: 2016-10-14
parameters:
  role: {type: string, default: compute}
  policy: {type: string, default: Retain}
  public: {type: string, default: public}
  name: {type: string}
conditions:
  unused: {equals: [{get_param: NotDeclaredHere}, true]}
  is_compute: {equals: [{get_param: role}, compute]}
  is_controller: {equals: [{get_param: role}, controller]}
resources:
  controller_only:
    type: OS::Not::InstalledHere
    condition: is_controller
  value:
    type: OS::Heat::Value
    deletion_policy: {get_param: policy}
    properties:
      value: {if: [is_compute, small, {if: [no_such_condition, huge, large]}]}
  router: {type: OS::Neutron::Router}
  gateway:
    type: OS::Neutron::RouterGateway
    properties: {router_id: {get_resource: router}, network: {get_param: public}}
outputs:
  size:
    value: {get_attr: [value, value]}
    export: true
"""


def test_cli_lenience_template_validate_accepts_what_heat_accepts_with_warnings(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "lenient.yaml", LENIENT)

    result = run("template", "validate", "-t", path)

    assert "Parameters:" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING: ")]
    assert any('Condition "unused" is used by no resource' in line for line in warnings), result.stderr
    assert any('Invalid condition "no_such_condition". It is in a branch of an if' in line for line in warnings), result.stderr
    assert any('outputs.size.export: "export" is not a keyword of an output definition: it is ignored' in line for line in warnings)
    assert any("resource type OS::Neutron::RouterGateway is HIDDEN since 5.0.0" in line for line in warnings)
    # the required `name` is not given: what create needs is a note, the conditions still decided
    assert "parameters.name: The Parameter (name) was not provided." in result.stderr
    assert "OS::Not::InstalledHere" not in result.stderr


def test_cli_lenience_resource_of_a_false_condition_is_not_looked_up_and_a_policy_may_be_a_function(run, tmp_path):  # noqa: F811
    body = LENIENT.replace("  router: {type: OS::Neutron::Router}\n", "").split("  gateway:")[0] + "outputs:\n  size: {value: {get_attr: [value, value]}, export: true}\n"
    path = write(tmp_path, "lenient.yaml", body)

    created = json.loads(run("stack", "create", "lenient", "-t", path, "--parameter", "name=x", "--wait", "-f", "json").stdout)

    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {"size": "small"}
    resources = json.loads(run("stack", "resource", "list", "lenient", "-f", "json").stdout)
    assert [r["resource_name"] for r in resources] == ["value"]
    # (that the Retain it resolves to is honoured: tests/scenarios/test_lenience.py)


LAZY = """\
heat_template_version: 2021-04-16
resources:
  none: {type: OS::Heat::None}
outputs:
  replaced: {value: {map_replace: [{a: 1}, {unknown_section: {a: b}}]}}
  repeated: {value: {repeat: {template: x, for_each: {"<%a%>": {k: v}}, permutations: false}}}
  digested: {value: {digest: [sha256, "\u65e5\u672c"]}}
  sha3: {value: {digest: [sha3_256, x]}}
"""


def test_cli_lenience_function_errors_are_the_outputs_and_the_stack_completes(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "lazy.yaml", LAZY)

    validated = run("template", "validate", "-t", path)
    assert validated.stderr.count("The output will show this error instead of a value") == 3
    created = json.loads(run("stack", "create", "lazy", "-t", path, "--wait", "-f", "json").stdout)

    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    shown = json.loads(run("stack", "output", "show", "lazy", "--all", "-f", "json").stdout)
    assert shown["sha3"]["output_value"] == "741efa311f97686956946758e0d95f70f11ff2da4f2feb7c54314f44134ac49f"
    assert shown["replaced"]["output_error"].startswith('Incorrect arguments to "map_replace"')
    assert shown["repeated"]["output_error"] == 'The values of the "for_each" argument to "repeat" must be lists'
    assert "Latin-1" in shown["digested"]["output_error"]


CHILD = """\
heat_template_version: 2021-04-16
parameters:
  data: {type: json}
resources:
  none: {type: OS::Heat::None}
outputs:
  count: {value: 2}
"""

UNKNOWN = """\
heat_template_version: 2021-04-16
resources:
  random: {type: OS::Heat::RandomString}
  child:
    type: child.yaml
    properties:
      data: [{get_attr: [random, value]}, fixed]
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_attr: [child, count]}
      resource_def: {type: OS::Heat::None}
"""


def test_cli_lenience_values_not_known_at_validation_are_no_internal_error(run, tmp_path):  # noqa: F811
    write(tmp_path, "child.yaml", CHILD)
    path = write(tmp_path, "unknown.yaml", UNKNOWN)

    validated = run("template", "validate", "-t", path)

    assert "resources.child: nested stack:" in validated.stderr
    assert "The Parameter (data) is given a value known only once the parent's resources exist" in validated.stderr
    created = json.loads(run("stack", "create", "unknown", "-t", path, "--wait", "-f", "json").stdout)
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]


def test_cli_lenience_nested_template_whose_parameters_are_not_known_is_validated(run, tmp_path):  # noqa: F811
    write(tmp_path, "child.yaml", CHILD.replace("  none: {type: OS::Heat::None}", "  none: {type: OS::Heat::None}\n  missing: {type: OS::Not::InstalledHere}"))
    path = write(tmp_path, "unknown.yaml", UNKNOWN)

    refused = run("template", "validate", "-t", path, check=False)

    assert refused.returncode != 0
    assert "child.yaml:6:19: resources.missing.type: The Resource Type (OS::Not::InstalledHere) could not be found." in refused.stderr


# Neutron LBaaS is gone from OpenStack; Heat keeps its v1 and v2 types as HIDDEN
# placeholders so that old templates still run.
OLD_LBAAS = """\
heat_template_version: 2016-10-14
resources:
  monitor:
    type: OS::Neutron::HealthMonitor
    properties: {type: HTTP, delay: 3, max_retries: 5, timeout: 5}
  pool:
    type: OS::Neutron::Pool
    properties: {protocol: HTTP, lb_method: ROUND_ROBIN, subnet: private, monitors: [{get_resource: monitor}]}
  balancer:
    type: OS::Neutron::LBaaS::LoadBalancer
    properties: {vip_subnet: private}
outputs:
  vip: {value: {get_attr: [balancer, vip_address]}}
"""


def test_cli_old_lbaas_types_run_as_heats_placeholders_with_a_warning_naming_the_replacement(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "old-lbaas.yaml", OLD_LBAAS)

    validated = run("template", "validate", "-t", path)
    created = json.loads(run("stack", "create", "old-lbaas", "-t", path, "--wait", "-f", "json").stdout)

    warnings = [line for line in validated.stderr.splitlines() if line.startswith("WARNING: ")]
    assert "WARNING: resources.pool.type: resource type OS::Neutron::Pool is HIDDEN since 9.0.0: Use LBaaS V2 instead." in warnings
    assert (
        "WARNING: resources.balancer.type: resource type OS::Neutron::LBaaS::LoadBalancer is HIDDEN since 21.0.0: "
        "Use octavia instead."
    ) in warnings
    # stoker's own types carry Heat's status chains as written: no load-time notes about them
    assert "plugin stoker.resources" not in validated.stderr + created.get("stack_status_reason", "")
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {"vip": None}
    resources = json.loads(run("stack", "resource", "list", "old-lbaas", "-f", "json").stdout)
    assert sorted(r["resource_type"] for r in resources) == [
        "OS::Neutron::HealthMonitor",
        "OS::Neutron::LBaaS::LoadBalancer",
        "OS::Neutron::Pool",
    ]
