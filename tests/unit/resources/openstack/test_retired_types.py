"""Types Heat 27 keeps HIDDEN because their services are gone (Sahara, Senlin, Monasca,
Vitrage, Magnum's Bay): a template naming them validates with Heat's warning (the status
chain's version and message), runs, creating nothing, and the types are not listed."""

from __future__ import annotations

import pytest

from stoker.api.catalog import listed_types
from tests.support.stacks import from_data

# Each type, the Heat release that hid it, and the message Heat gives.
RETIRED = {
    **{
        f"OS::Sahara::{name}": ("23.0.0", "Sahara project was retired")
        for name in (
            "Cluster", "ClusterTemplate", "NodeGroupTemplate", "DataSource", "ImageRegistry",
            "Job", "JobBinary",
        )
    },
    **{
        f"OS::Senlin::{name}": ("23.0.0", "Senlin project was retired")
        for name in ("Cluster", "Node", "Policy", "Profile", "Receiver")
    },
    "OS::Monasca::AlarmDefinition": ("25.0.0", "Monasca project was retired"),
    "OS::Monasca::Notification": ("25.0.0", "Monasca project was retired"),
    # Heat 27's own message for Vitrage, copied as it is.
    "OS::Vitrage::Template": ("27.0.0", "Senlin project was retired"),
    "OS::Magnum::Bay": ("11.0.0", "Please use OS::Magnum::Cluster instead."),
}  # fmt: skip


def _template() -> dict:
    resources = {
        f"r{index}": {"type": type_name, "properties": {"anything": index, "name": "old"}}
        for index, type_name in enumerate(sorted(RETIRED))
    }
    resources["r0"]["properties"]["depends"] = {"get_attr": ["r1", "whatever"]}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def test_retired_types_validate_with_heats_hidden_warning(service):
    _, warnings = service.validate_template(from_data(_template()))

    for index, type_name in enumerate(sorted(RETIRED)):
        since, message = RETIRED[type_name]
        expected = (
            f"resources.r{index}.type: resource type {type_name} is HIDDEN since {since}: {message}"
        )
        assert expected in warnings, warnings


def test_retired_types_create_nothing_and_delete(service):
    stack = service.create_stack("retired", from_data(_template()))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert {record.type for record in service.list_resources("retired")} == set(RETIRED)
    service.delete_stack("retired")
    assert service.store.find_stack("retired") is None


@pytest.mark.parametrize("support_status", [None, "HIDDEN"])
def test_retired_types_are_not_listed(service, support_status):
    listed = set(listed_types(service, None, support_status, None, lambda name: True))

    assert not listed & set(RETIRED)
