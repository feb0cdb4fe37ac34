"""The suite runs on the pinned set: every package stoker and its tests need is pinned in
``constraints.txt`` and installed at that version, and the side environments' files pin
what they name. A dependency added to ``pyproject.toml`` without a refresh
(``bash .ci/refresh-constraints``) fails here, not on a machine installed on another day."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import agents, horizon, tempest, venv_cache

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*$")


def pins(path: Path) -> dict[str, str]:
    """The ``name==version`` lines of a constraints file, by canonical name."""
    found: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = PIN.match(line)
        assert match, f"{path.name}:{number}: not an exact pin: {line!r}"
        found[canonicalize_name(match[1])] = match[2]
    return found


def needed(root: str, extras: set[str]) -> set[str]:
    """The installed distributions ``root`` with ``extras`` needs, itself left out
    (each requirement's markers evaluated here, as pip evaluated them)."""
    seen: set[str] = set()
    pending = [(root, extras)]
    while pending:
        name, wanted = pending.pop()
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            if requirement.marker is not None and not any(
                requirement.marker.evaluate({"extra": extra}) for extra in (wanted or {""})
            ):
                continue
            dependency = canonicalize_name(requirement.name)
            key = (dependency, frozenset(requirement.extras))
            if key in seen:
                continue
            seen.add(key)
            pending.append((dependency, set(requirement.extras)))
    return {name for name, _ in seen}


def test_constraints_pin_every_package_the_suite_runs_on_at_its_installed_version():
    pinned = pins(ROOT / "constraints.txt")

    closure = needed("stoker", {"test"})

    assert closure, "stoker's own metadata names no requirement: is it installed?"
    unpinned = sorted(closure - pinned.keys())
    assert not unpinned, f"not in constraints.txt (run bash .ci/refresh-constraints): {unpinned}"
    drifted = {name: (metadata.version(name), pinned[name]) for name in closure if metadata.version(name) != pinned[name]}
    assert not drifted, f"installed (left) is not the pin (right); install with -c constraints.txt: {drifted}"


def test_constraints_satisfy_the_ranges_pyproject_declares():
    pinned = pins(ROOT / "constraints.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    for text in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        requirement = Requirement(text)
        version = pinned[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(version, prereleases=True), f"{requirement} is pinned at {version}"


def test_the_build_backend_is_pinned():
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]

    assert all("==" in requirement for requirement in build), build


@pytest.mark.parametrize(
    ("environment", "named"),
    [("tempest", tempest.TEMPEST_REQUIREMENTS), ("agents", agents.AGENT_REQUIREMENTS), ("horizon", horizon.HORIZON_REQUIREMENTS)],
)
def test_side_environments_pin_what_they_name(environment, named):
    pinned = pins(venv_cache.constraints_file(environment))

    for text in named:
        requirement = Requirement(text)
        assert pinned.get(canonicalize_name(requirement.name)) == str(requirement.specifier).removeprefix("=="), (
            f"{environment}: {requirement} is not what constraints/{environment}.txt pins; run bash .ci/refresh-constraints"
        )
