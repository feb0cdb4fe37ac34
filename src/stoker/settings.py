"""Settings, read from the environment (``STOKER_*``) with command-line overrides.

Units are in the names. Defaults follow Heat where Heat has the same knob.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def default_database_url() -> str:
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'stoker' / 'stoker.sqlite'}"


@dataclass
class Settings:
    database_url: str = field(default_factory=default_database_url)
    plugin_dirs: list[str] = field(default_factory=list)
    # Plugin handler calls running at once (threads).
    handler_threads: int = 8
    # Resources in flight at once in one stack action.
    max_in_flight: int = 1000
    # Heat's max_template_size.
    max_template_bytes: int = 512 * 1024
    # Heat's max_resources_per_stack (-1: no limit).
    max_resources_per_stack: int = 1000
    # Heat's max_events_per_stack: older events are pruned after each action (-1: keep all).
    max_events_per_stack: int = 1000
    # Heat's max_nested_stack_depth: how deep nested stacks (and template resources) go.
    max_nested_depth: int = 5
    # abandon and adopt, off by default as in Heat (enable_stack_abandon/adopt).
    enable_stack_abandon: bool = False
    enable_stack_adopt: bool = False

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        settings = cls()
        if env.get("STOKER_DATABASE_URL"):
            settings.database_url = env["STOKER_DATABASE_URL"]
        if env.get("STOKER_PLUGIN_DIRS"):
            settings.plugin_dirs = [d for d in env["STOKER_PLUGIN_DIRS"].split(os.pathsep) if d]
        for name, variable in (
            ("handler_threads", "STOKER_HANDLER_THREADS"),
            ("max_in_flight", "STOKER_MAX_IN_FLIGHT"),
            ("max_template_bytes", "STOKER_MAX_TEMPLATE_BYTES"),
            ("max_resources_per_stack", "STOKER_MAX_RESOURCES_PER_STACK"),
            ("max_events_per_stack", "STOKER_MAX_EVENTS_PER_STACK"),
            ("max_nested_depth", "STOKER_MAX_NESTED_DEPTH"),
        ):
            if env.get(variable):
                try:
                    setattr(settings, name, int(env[variable]))
                except ValueError:
                    raise ValueError(f"{variable} must be an integer, got {env[variable]!r}")
        for name, variable in (("enable_stack_abandon", "STOKER_ENABLE_STACK_ABANDON"), ("enable_stack_adopt", "STOKER_ENABLE_STACK_ADOPT")):
            if env.get(variable):
                setattr(settings, name, env[variable].lower() in ("1", "true", "yes", "on"))
        for key, value in overrides.items():
            if value is not None and value != []:
                setattr(settings, key, value)
        return settings
