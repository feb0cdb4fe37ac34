"""``stoker template ...`` and ``stoker resource type ...``: what the engine offers
(validation, template versions and functions, resource types). Registered on
the root group of ``cli/groups.py``."""

from __future__ import annotations

import json

import click

from stoker.cli import completion, render
from stoker.cli.groups import main
from stoker.cli.invocation import (
    FORMAT,
    Failure,
    given_parameters,
    reader_of,
    stack_request,
    template_warnings,
)
from stoker.sdk.exceptions import StokerError


@main.group()
def template() -> None:
    """Templates: validate, and the versions and functions of the language."""


@template.group("version")
def template_version() -> None:
    """Template versions."""


@template_version.command("list")
@FORMAT
@click.pass_context
def template_version_list(ctx, fmt):
    """List the template versions (with their type and aliases)."""
    render.print_list(reader_of(ctx).template_versions(), fmt)


@template.group("function")
def template_function() -> None:
    """Functions of a template version."""


@template_function.command("list")
@click.argument("version")
@click.option("--with_conditions", "--with-conditions", "with_conditions", is_flag=True, help="Also list the condition functions.")
@FORMAT
@click.pass_context
def template_function_list(ctx, version, with_conditions, fmt):
    """List the functions a template version offers.

    VERSION is a name from 'stoker template version list'
    (heat_template_version.2021-04-16, AWSTemplateFormatVersion.2010-09-09, ...), or a
    HOT date or alias (2021-04-16, wallaby)."""
    functions = reader_of(ctx).template_functions(version, with_conditions)
    if functions is None:
        raise StokerError(f"Template version {version} is not supported", hint="see 'stoker template version list'")
    render.print_list(functions, fmt)


@template.command("validate")
@click.option("-t", "--template", "template_path", required=True, help="Path to the template.")
@click.option("-e", "--environment", "environments", multiple=True, help="Path to an environment (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--show-nested", is_flag=True, help="Also describe the parameters of nested stacks (NestedParameters).")
@click.option(
    "--strict", is_flag=True,
    help="For CI: exit 1 on the warnings and on what a stack create would still refuse (the NOTE lines), which are then errors.",
)
@click.option("-f", "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.pass_context
def template_validate(ctx, template_path, environments, parameters, show_nested, strict, fmt):
    """Validate a template; print Heat's validate result. Warnings and what a create
    would still need go to stderr; as Heat's, the exit status is 0 with them, unless
    --strict."""
    backend = reader_of(ctx)
    request = stack_request(backend, template_path, environments, given_parameters(parameters))
    result = backend.validate_template(request, show_nested)
    # The engine's warnings, and what the command finds itself (the same said once).
    engine = result.pop("Warnings", None) or []
    # A nested template's warning the engine gave already, placed under its resource
    # ("resources.inner: nested stack: inner.yaml:9:3: ..."), is not said twice.
    read_here = [w for w in template_warnings(backend, request) if not any(said.endswith(f": {w}") for said in engine)]
    warnings = list(dict.fromkeys([*engine, *read_here]))
    notes = result.pop("Notes", None) or []
    if fmt == "json":
        click.echo(json.dumps(result, indent=4, default=str))
    else:
        import yaml

        click.echo(yaml.safe_dump(result, sort_keys=False, default_flow_style=False).rstrip())
    level = "ERROR" if strict else "WARNING"
    for warning in warnings:
        click.echo(f"{level}: {warning}", err=True)
    # Not errors (Heat's validate needs no values): what a create would still need.
    for note in notes:
        click.echo(f"{'ERROR' if strict else 'NOTE'}: stack create needs: {note}", err=True)
    if strict and (warnings or notes):
        raise Failure(f"--strict: {len(warnings)} warning(s), {len(notes)} thing(s) a stack create would refuse")


@click.group()
def resource_type() -> None:
    """Resource types."""


main.add_command(resource_type, "resource")


@resource_type.group("type")
def rtype() -> None:
    """Resource types known to the engine."""


TYPE_FILTER_KEYS = ("name", "version", "support_status")


@rtype.command("list")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE", help="name (a regular expression), version or support_status (repeatable).")
@click.option("--long", "long_format", is_flag=True, help="Also show each type's description.")
@FORMAT
@click.pass_context
def resource_type_list(ctx, filters, long_format, fmt):
    """List resource types (HIDDEN ones are not listed)."""
    wanted: dict[str, str] = {}
    for pair in filters:
        key, sep, value = pair.partition("=")
        if not sep or key not in TYPE_FILTER_KEYS:
            raise click.UsageError(f"--filter expects KEY=VALUE with KEY one of {', '.join(TYPE_FILTER_KEYS)}, got {pair!r}")
        wanted[key] = value
    found = reader_of(ctx).resource_types(wanted, with_description=long_format)
    if long_format:
        render.print_list([{"Resource Type": item["resource_type"], "Description": item["description"]} for item in found], fmt)
        return
    render.print_list([{"Resource Type": name} for name in found], fmt)


@rtype.command("show")
@click.argument("type_name", shell_complete=completion.resource_types)
@click.option("-f", "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
@click.option(
    "--template-type", type=click.Choice(["hot", "cfn"], case_sensitive=False),
    help="Instead, a template of one resource of the type: a parameter per property, an output per attribute.",
)
@click.pass_context
def resource_type_show(ctx, type_name, fmt, template_type):
    """Show a resource type's properties, attributes, support status and description."""
    reader = reader_of(ctx)
    schema = reader.resource_type_template(type_name, template_type) if template_type else reader.resource_type(type_name)
    if fmt == "json":
        click.echo(json.dumps(schema, indent=4))
    else:
        import yaml

        click.echo(yaml.safe_dump(schema, sort_keys=False, default_flow_style=False).rstrip())
