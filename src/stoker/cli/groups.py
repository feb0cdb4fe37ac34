"""The ``stoker`` command's groups: the root group (its options, and one clear message
and a non-zero exit for every error, never a traceback), ``stoker stack`` and the groups
under it, and the options several command modules share. The command modules register
their commands on these; ``cli/main.py`` imports them all. Must not import a command
module (or ``cli/main.py``): that was the cycle this module breaks."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from stoker.cli.invocation import Failure, report
from stoker.sdk.exceptions import StokerError

# A dry run's plan, saved for 'stoker stack apply' (cli/plans.py).
PLAN_OUT = click.option("--plan-out", "plan_out", metavar="FILE", help="With --dry-run: also save the plan to FILE, for 'stoker stack apply FILE'.")


class StokerGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (StokerError, Failure) as error:
            report(error)
            sys.exit(1)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            # The reader went away (`stoker ... | head`): stop quietly, as Unix tools do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(1)
        except Exception as error:  # noqa: BLE001 - last line of defence: no traceback for users
            if os.environ.get("STOKER_DEBUG"):
                raise
            click.echo(f"ERROR: internal error: {type(error).__name__}: {error} (set STOKER_DEBUG=1 for the traceback)", err=True)
            sys.exit(2)


@click.group(cls=StokerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--database-url", envvar="STOKER_DATABASE_URL", help="SQLAlchemy URL of the store (default: SQLite file in ~/.local/share/stoker).")
@click.option("--plugin-dir", "plugin_dirs", multiple=True, help="Directory of resource plugins (repeatable).")
@click.option(
    "--os-cloud", "os_cloud", metavar="NAME",
    help="The cloud of clouds.yaml: without --url, the cloud OpenStack resources are made in (default: OS_CLOUD, or the OS_* variables); with --url, the Keystone the command authenticates with.",
)
@click.option(
    "--url", envvar="STOKER_URL", metavar="URL",
    help="Talk to the stoker server (or Orchestration API) at URL, e.g. http://127.0.0.1:8004 or http://HOST:8004/v1/PROJECT, instead of the embedded engine; 'catalog': the orchestration endpoint of the --os-cloud's catalog.",
)
@click.option("--os-token", "os_token", envvar="STOKER_TOKEN", metavar="TOKEN", help="With --url: the token to send (a static token of --auth-mode token, or a Keystone token).")
@click.option(
    "--project", envvar="STOKER_PROJECT", metavar="PROJECT",
    help="Without --url: the project the embedded engine makes stacks in and finds them by name in (default: 'default', what a server shows at /v1/default).",
)
@click.option(
    "--files-root", "files_root", envvar="STOKER_FILES_ROOT", metavar="DIR", type=click.Path(exists=True, file_okay=False),
    help="Read the files templates and environments name (get_file, template resources) anywhere under DIR, not only under the directory of the file that names them.",
)
@click.version_option(package_name="stoker")
@click.pass_context
def main(
    ctx: click.Context, database_url: str | None, plugin_dirs: tuple[str, ...], os_cloud: str | None, url: str | None, os_token: str | None, project: str | None,
    files_root: str | None,
) -> None:
    """stoker: orchestration of stacks from HOT templates, on the embedded engine or,
    with --url, on a stoker server."""
    if url:
        # The embedded engine's own: a server has its store and plugins.
        for name, flag in (("database_url", "--database-url"), ("plugin_dirs", "--plugin-dir"), ("project", "--project")):
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
                raise click.UsageError(f"{flag} is the embedded engine's: with --url the server uses its own")
    ctx.obj = {
        "database_url": database_url, "plugin_dirs": plugin_dirs, "os_cloud": os_cloud, "url": url, "os_token": os_token, "project": project,
        "files_root": files_root,
    }  # fmt: skip


@main.group()
def stack() -> None:
    """Stacks: create, list, show, update, delete, and their resources, events, outputs."""


@stack.group("resource")
def resource() -> None:
    """Resources of a stack."""


@stack.group("hook")
def hook() -> None:
    """Hooks (breakpoints)."""


@stack.group("event")
def event() -> None:
    """Events of a stack."""


@stack.group("output")
def output() -> None:
    """Outputs of a stack."""
