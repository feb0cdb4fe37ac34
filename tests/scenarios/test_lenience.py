"""Heat's lenience that real templates rely on (issue 27): what Heat 27 accepts and runs
is accepted and run here, with a warning or a note where an author may not mean it, and
what Heat reports lazily (an output's functions) is that output's error, not the stack's.
Where stoker checks deeper than Heat's validate (a nested template whose parameters are not
known yet), it still finds what is wrong."""

from __future__ import annotations

import pytest

from stoker.template.errors import TemplateErrors
from tests.support.stacks import states, template


def refusal(service, body: str, **kwargs) -> list[str]:
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("refused", template(body), **kwargs)
    return [str(error) for error in caught.value.errors]


def outputs(service, name: str) -> dict[str, tuple]:
    return {o["output_key"]: (o.get("output_value"), o.get("output_error")) for o in service.outputs(name)}


# -- conditions: only those used are evaluated -------------------------------------------

UNUSED_CONDITION = """
heat_template_version: 2016-10-14
parameters:
  role: {type: string, default: compute}
conditions:
  # TripleO's rendered overcloud keeps conditions naming parameters it did not declare.
  unused: {equals: [{get_param: NotDeclaredHere}, true]}
  also_unused: {not: no_such_condition}
  is_compute: {equals: [{get_param: role}, compute]}
resources:
  marker:
    type: OS::Heat::None
    condition: is_compute
"""


def test_lenience_unused_condition_naming_an_undeclared_parameter_is_never_evaluated(service):
    stack = service.create_stack("conditions", template(UNUSED_CONDITION))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert set(states(service, "conditions")) == {"marker"}
    _, warnings = service.validate_template(template(UNUSED_CONDITION))
    assert any("The Parameter (NotDeclaredHere) was not defined in template" in w and '"unused" is used by no resource' in w for w in warnings)
    assert any('Invalid condition "no_such_condition"' in w for w in warnings)


def test_lenience_used_condition_naming_an_undeclared_parameter_is_still_refused(service):
    body = UNUSED_CONDITION.replace("condition: is_compute", "condition: unused")

    assert any("The Parameter (NotDeclaredHere) was not defined in template." in p for p in refusal(service, body))


FALSE_CONDITION = """
heat_template_version: 2016-10-14
parameters:
  with_extra: {type: boolean, default: false}
  name: {type: string}
conditions:
  extra: {get_param: with_extra}
resources:
  extra:
    type: OS::Not::InstalledHere
    condition: extra
  main:
    type: OS::Heat::Value
    properties: {value: {get_param: name}}
"""


def test_lenience_resource_whose_condition_is_false_is_dropped_before_its_type_is_looked_up(service):
    # Template-validate without the required `name`: the condition is still decided.
    notes: list[str] = []
    service.validate_template(template(FALSE_CONDITION), notes=notes)
    assert any("parameters.name" in note for note in notes)

    stack = service.create_stack("dropped", template(FALSE_CONDITION), parameters={"name": "x"})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert set(states(service, "dropped")) == {"main"}
    # A true condition brings the type back, and its error.
    assert any("OS::Not::InstalledHere" in p for p in refusal(service, FALSE_CONDITION, parameters={"name": "x", "with_extra": True}))


def test_lenience_resource_whose_condition_needs_a_missing_parameter_is_validated_with_a_note(service):
    body = FALSE_CONDITION.replace("{get_param: with_extra}", "{equals: [{get_param: name}, big]}")
    notes: list[str] = []

    with pytest.raises(TemplateErrors, match="OS::Not::InstalledHere"):
        service.validate_template(template(body), notes=notes)
    body = body.replace("OS::Not::InstalledHere", "OS::Heat::None")
    service.validate_template(template(body), notes=notes)
    assert any("resources.extra.condition: Its condition needs parameter values not given" in note for note in notes)


IF_IN_A_BRANCH = """
heat_template_version: 2016-10-14
parameters:
  big: {type: boolean, default: false}
conditions:
  is_big: {get_param: big}
resources:
  size:
    type: OS::Heat::Value
    properties:
      value: {if: [is_big, {if: [no_such_condition, huge, large]}, small]}
outputs:
  size: {value: {get_attr: [size, value]}}
"""


def test_lenience_if_naming_an_undeclared_condition_in_a_branch_not_taken(service):
    stack = service.create_stack("branch", template(IF_IN_A_BRANCH))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "branch")["size"] == ("small", None)
    _, warnings = service.validate_template(template(IF_IN_A_BRANCH))
    assert any('Invalid condition "no_such_condition". It is in a branch of an if' in w for w in warnings)
    # Taken, the branch is refused, as Heat refuses it.
    assert any('Invalid condition "no_such_condition"' in p for p in refusal(service, IF_IN_A_BRANCH, parameters={"big": True}))


# -- resource and output definitions ------------------------------------------------------

DELETION_POLICY = """
heat_template_version: 2016-10-14
parameters:
  policy: {type: string, default: Retain}
resources:
  kept:
    type: OS::Heat::None
    deletion_policy: {get_param: policy}
"""


def test_lenience_deletion_policy_given_by_a_function_is_resolved_and_honoured(service):
    stack = service.create_stack("policy", template(DELETION_POLICY))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason

    deleted = service.delete_stack("policy")

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    reasons = [event.resource_status_reason for event in service.store.events.list_events(stack.id, "kept")]
    assert "Retained: deletion_policy is Retain" in reasons


def test_lenience_deletion_policy_function_giving_no_policy_is_refused(service):
    found = refusal(service, DELETION_POLICY, parameters={"policy": "Keep"})

    assert any('resources.kept.deletion_policy: Invalid deletion policy "Keep"' in p for p in found)


OUTPUT_EXTRA_KEYS = """
heat_template_version: 2021-04-16
resources:
  none: {type: OS::Heat::None}
outputs:
  url:
    value: http://example.com
    descripion: a misspelt key
    export: true
"""


def test_lenience_extra_keys_in_an_output_are_ignored_with_a_warning(service):
    stack = service.create_stack("outputs", template(OUTPUT_EXTRA_KEYS))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "outputs")["url"] == ("http://example.com", None)
    _, warnings = service.validate_template(template(OUTPUT_EXTRA_KEYS))
    assert any('outputs.url.descripion: "descripion" is not a keyword of an output definition: it is ignored' in w and "did you mean 'description'?" in w for w in warnings)


def test_lenience_hidden_router_gateway_is_accepted_with_a_warning(service):
    body = """
    heat_template_version: 2016-10-14
    parameters:
      public: {type: string, default: public}
    resources:
      router: {type: OS::Neutron::Router}
      gateway:
        type: OS::Neutron::RouterGateway
        properties:
          router_id: {get_resource: router}
          network_id: {get_param: public}
    """

    result, warnings = service.validate_template(template(body))

    assert "Parameters" in result
    assert any("resource type OS::Neutron::RouterGateway is HIDDEN since 5.0.0" in w for w in warnings)
    assert any("property network_id is HIDDEN since 9.0.0: Use property network." in w for w in warnings)


# -- values keep Heat's types --------------------------------------------------------------

TYPED_VALUES = """
heat_template_version: 2021-04-16
resources:
  number: {type: OS::Heat::Value, properties: {type: number, value: "42"}}
  flag: {type: OS::Heat::Value, properties: {type: boolean, value: "true"}}
  text: {type: OS::Heat::Value, properties: {type: string, value: 5}}
  items: {type: OS::Heat::Value, properties: {type: comma_delimited_list, value: [a, b]}}
outputs:
  number: {value: {get_attr: [number, value]}}
  flag: {value: {get_attr: [flag, value]}}
  text: {value: {get_attr: [text, value]}}
  items: {value: {get_attr: [items, value]}}
"""


def test_lenience_value_type_validates_but_does_not_convert(service):
    stack = service.create_stack("values", template(TYPED_VALUES))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "values") == {
        "number": ("42", None),
        "flag": ("true", None),
        "text": (5, None),
        "items": (["a", "b"], None),
    }


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("boolean", '"yes"', '"yes" is not a valid boolean'),
        ("comma_delimited_list", '"a,b"', "\"'a,b'\" is not a list"),
        ("number", "abc", "Value 'abc' is not a number"),
        ("json", "[1]", '"[1]" is not a map'),
    ],
)
def test_lenience_value_type_is_as_strict_as_heats_property_of_that_type(service, kind, value, message):
    body = f"heat_template_version: 2021-04-16\nresources:\n  v: {{type: OS::Heat::Value, properties: {{type: {kind}, value: {value}}}}}\n"

    found = refusal(service, body)

    assert any("resources.v.properties.value: " + message in p for p in found), found


# -- function errors Heat reports lazily ---------------------------------------------------

LAZY_OUTPUTS = """
heat_template_version: 2021-04-16
resources:
  none: {type: OS::Heat::None}
outputs:
  replaced: {value: {map_replace: [{a: 1}, {unknown_section: {a: b}}]}}
  repeated: {value: {repeat: {template: x, for_each: {"<%a%>": {k: v}}, permutations: false}}}
  latin1: {value: {digest: [sha256, "\u65e5\u672c"]}}
  algorithm: {value: {digest: [crc32, x]}}
  extendable: {value: {digest: [shake_128, x]}}
  sha3: {value: {digest: [sha3_256, x]}}
  blake: {value: {digest: [blake2b, x]}}
  fine: {value: ok}
"""


def test_lenience_function_errors_in_outputs_are_the_outputs_and_the_stack_completes(service):
    stack = service.create_stack("lazy", template(LAZY_OUTPUTS))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    found = outputs(service, "lazy")
    assert found["fine"] == ("ok", None)
    assert found["sha3"] == ("741efa311f97686956946758e0d95f70f11ff2da4f2feb7c54314f44134ac49f", None)
    assert len(found["blake"][0]) == 128
    assert found["replaced"][0] is None and found["replaced"][1].startswith('Incorrect arguments to "map_replace"')
    assert found["repeated"] == (None, 'The values of the "for_each" argument to "repeat" must be lists')
    assert "Latin-1" in found["latin1"][1]
    assert found["algorithm"][1].startswith("Algorithm must be one of ") and "shake_128" in found["algorithm"][1]
    assert "needs a length" in found["extendable"][1]


def test_lenience_validate_warns_of_the_output_errors_it_can_foresee(service):
    _, warnings = service.validate_template(template(LAZY_OUTPUTS))

    foreseen = [w.split(": ")[1] for w in warnings if "The output will show this error instead of a value" in w]
    assert foreseen == [f"outputs.{name}.value" for name in ("replaced", "repeated", "latin1", "algorithm", "extendable")]


# -- values not known at validation: never an internal error -------------------------------

CHILD = """
heat_template_version: 2021-04-16
parameters:
  data: {type: json}
  name: {type: string, default: x}
resources:
  none: {type: OS::Heat::None}
outputs:
  count: {value: 2}
"""

UNKNOWN_VALUES = """
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


def test_lenience_json_list_and_group_count_not_known_yet_validate_and_create(service):
    notes: list[str] = []
    service.validate_template(template(UNKNOWN_VALUES), files={"child.yaml": CHILD}, notes=notes)

    assert any("resources.child: nested stack:" in note and "The Parameter (data) is given a value known only once" in note for note in notes)
    stack = service.create_stack("unknown", template(UNKNOWN_VALUES), files={"child.yaml": CHILD})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert len(states(service, "unknown")) == 3


BROKEN_CHILD = """
heat_template_version: 2021-04-16
parameters:
  name: {type: string}
resources:
  value:
    type: OS::Heat::Value
    properties:
      value: {get_param: name}
      no_such_property: 1
  missing: {type: OS::Not::InstalledHere}
"""


def test_lenience_nested_template_whose_parameters_are_not_known_is_still_validated(service):
    body = """
    heat_template_version: 2021-04-16
    resources:
      random: {type: OS::Heat::RandomString}
      child:
        type: child.yaml
        properties: {name: {get_attr: [random, value]}}
    """

    found = refusal(service, body, files={"child.yaml": BROKEN_CHILD})

    (problem,) = found
    assert "resources.value.properties.no_such_property: Unknown Property no_such_property" in problem
    assert "resources.missing.type: The Resource Type (OS::Not::InstalledHere) could not be found." in problem
    with pytest.raises(TemplateErrors, match="OS::Not::InstalledHere"):
        service.validate_template(template(body), files={"child.yaml": BROKEN_CHILD})


def test_lenience_group_count_not_known_yet_is_checked_against_the_limit_at_create(service):
    body = """
    heat_template_version: 2021-04-16
    resources:
      sizes: {type: counts.yaml}
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: {get_attr: [sizes, count]}
          resource_def: {type: OS::Heat::None}
    """
    counts = "heat_template_version: 2021-04-16\noutputs:\n  count: {value: 2}\n"

    result, _ = service.validate_template(template(body), files={"counts.yaml": counts})

    assert "Parameters" in result
    stack = service.create_stack("counted", template(body), files={"counts.yaml": counts})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
