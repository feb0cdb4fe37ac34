"""A stack as template functions see it, and helpers to parse and resolve snippets
with a version's tables (shared by the test_functions_* modules)."""

from __future__ import annotations

from typing import Any

import pytest

from stoker.sdk.properties import UNRESOLVED
from stoker.template import versions
from stoker.template.errors import TemplateError, TemplateWarning
from stoker.template.functions.base import Parser, has_functions, resolve

LATEST = "2021-04-16"
PATH = ("resources", "server", "properties")


class FakeContext:
    """Parameters, named conditions, and resources that are created (a reference and
    attributes) or not yet (None). ``facade``: the parent resource's data, for
    resource_facade (None: a top-level stack, without the method)."""

    def __init__(
        self,
        parameters: dict[str, Any] | None = None,
        resources: dict[str, Any] | None = None,
        conditions: dict[str, bool] | None = None,
    ):
        self.parameters = parameters or {}
        self.resources = resources or {}
        self.conditions = conditions or {}
        self.attribute_reads: list[tuple[str, str, tuple]] = []

    def parameter(self, name: str) -> Any:
        return self.parameters[name]

    def has_resource(self, name: str) -> bool:
        return name in self.resources

    def resource_reference(self, name: str) -> Any:
        resource = self.resources[name]
        return UNRESOLVED if resource is None else resource["reference"]

    def resource_attribute(self, name: str, attribute: str, path: tuple) -> Any:
        self.attribute_reads.append((name, attribute, path))
        resource = self.resources[name]
        if resource is None:
            return UNRESOLVED
        value = resource["attributes"][attribute]
        for step in path:
            value = value[step]
        return value

    def resource_attributes(self, name: str) -> Any:
        resource = self.resources[name]
        return UNRESOLVED if resource is None else dict(resource["attributes"])

    def condition(self, name: str) -> bool:
        if name not in self.conditions:
            raise TemplateError(f'Invalid condition "{name}"')
        return self.conditions[name]


class NestedContext(FakeContext):
    """A stack that implements a resource: resource_facade answers."""

    def __init__(self, facade: dict[str, Any], **kwargs: Any):
        super().__init__(**kwargs)
        self.facade = facade

    def resource_facade(self, attribute: str) -> Any:
        return self.facade[attribute]


def parse(data: Any, version: str = LATEST, files: dict[str, str] | None = None) -> tuple[Any, list[TemplateError]]:
    table = versions.find(version)
    errors: list[TemplateError] = []
    parser = Parser(
        table.functions, errors, table.unknown_functions, table.condition_functions, files or {}, removed=table.removed_functions
    )
    return parser.parse(data, PATH), errors


def data_warning(data: Any, version: str = LATEST, condition: bool = False) -> TemplateWarning:
    """The one warning for ``data``, a one-key map whose key is no function in
    ``version``: Heat reads it as a plain map, so it parses to itself, with no error."""
    table = versions.find(version)
    errors: list[TemplateError] = []
    parser = Parser(table.functions, errors, table.unknown_functions, table.condition_functions, removed=table.removed_functions)
    parsed = (parser.for_conditions() if condition else parser).parse(data, PATH)
    assert errors == [], [str(error) for error in errors]
    assert parsed == data and not has_functions(parsed)
    assert len(parser.warnings) == 1, [str(warning) for warning in parser.warnings]
    return parser.warnings[0]


def parse_condition(data: Any, version: str = LATEST) -> tuple[Any, list[TemplateError]]:
    table = versions.find(version)
    errors: list[TemplateError] = []
    parser = Parser(table.functions, errors, table.unknown_functions, table.condition_functions, removed=table.removed_functions)
    return parser.for_conditions().parse(data, ("conditions", "c")), errors


def parse_ok(data: Any, version: str = LATEST, files: dict[str, str] | None = None) -> Any:
    parsed, errors = parse(data, version, files)
    assert errors == [], [str(error) for error in errors]
    return parsed


def parse_error(data: Any, version: str = LATEST, files: dict[str, str] | None = None) -> TemplateError:
    _, errors = parse(data, version, files)
    assert len(errors) == 1, [str(error) for error in errors]
    return errors[0]


def evaluate(data: Any, context: FakeContext | None = None, version: str = LATEST, files: dict[str, str] | None = None) -> Any:
    return resolve(parse_ok(data, version, files), context or FakeContext())


def evaluate_error(
    data: Any, context: FakeContext | None = None, version: str = LATEST, files: dict[str, str] | None = None
) -> TemplateError:
    parsed = parse_ok(data, version, files)
    with pytest.raises(TemplateError) as caught:
        resolve(parsed, context or FakeContext())
    return caught.value


PENDING = FakeContext(resources={"pending": None})
"""A resource not created yet: what a value that depends on it resolves to is UNRESOLVED."""

VERSIONS_FROM = {date: [d for d in versions.HOT_VERSIONS if d >= date] for date in versions.HOT_VERSIONS}
VERSIONS_BEFORE = {date: [d for d in versions.HOT_VERSIONS if d < date] for date in versions.HOT_VERSIONS}
