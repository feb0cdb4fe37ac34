"""``stoker``: the command line, assembled. The groups and the root's options are in
``cli/groups.py``; each command module registers its commands on them when imported, and
this module imports them all. Flags follow ``openstack stack ...`` where it has the same
command. Every error is one clear message and a non-zero exit, never a traceback (set
STOKER_DEBUG=1 to see one). No command module imports this one (an import-linter
contract, pyproject.toml)."""

from __future__ import annotations

from stoker.cli import (  # noqa: F401 - importing a command module registers its commands
    capabilities,
    catalog,
    details,
    docs,
    graph,
    operations,
    plans,
    stacks,
    worker,
)
from stoker.cli.groups import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    main()
