"""The global environment: the files of ``Settings.environment_dir`` (Heat's
``environment_dir``, ``/etc/heat/environment.d``), read once when the registry is built.

Only their ``resource_registry`` counts, as in Heat (``read_global_environment``): its
entries sit beneath every stack's own environment (a user's entry for the same type
wins), and a ``null`` entry removes a mapping or a plugin type from the registry
(``OS::Nova::*: null`` every type under the prefix). Files are read in sorted name order
(Heat reads ``glob('*')`` order, which the file system decides); names starting with
``.`` are skipped, as a glob skips them. A file that cannot be read or parsed is reported
and skipped, as Heat logs and skips it. A template the global registry maps a type to is
read here, from a ``file://`` URL or a path (a relative one from the directory).

Beneath the operator's directory lies Heat's own default environment, shipped in this
package (``environment/default``: Heat's ``etc/heat/environment.d/default.yaml`` and the
templates it maps AWS::CloudWatch::Alarm and AWS::RDS::DBInstance to). Its templates keep
Heat's names (``file:///etc/heat/templates/<name>``) and are read from the package, never
from that path; an operator's environment may remap or remove (``null``) its entries.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from stoker.environment.environment import load_registry, parse
from stoker.environment.registry import TEMPLATE_SUFFIXES, ResourceRegistry
from stoker.template.errors import TemplateError, TemplateErrors

LOG = logging.getLogger(__name__)


DEFAULT_DIRECTORY = Path(__file__).with_name("default")
# Where Heat's packages install the default environment's templates.
HEAT_TEMPLATES_URL = "file:///etc/heat/templates/"


def load_default_environment(registry: ResourceRegistry) -> None:
    """Load Heat's default environment, shipped in this package."""
    for path in sorted((DEFAULT_DIRECTORY / "templates").glob("*.yaml")):
        registry.environment_files.setdefault(HEAT_TEMPLATES_URL + path.name, path.read_text())
    environment = parse((DEFAULT_DIRECTORY / "default.yaml").read_bytes(), "default.yaml")
    load_global_registry(registry, environment.resource_registry, DEFAULT_DIRECTORY)


def load_environment_dir(registry: ResourceRegistry, directory: str | Path | None) -> None:
    if not directory:
        return
    root = Path(directory).expanduser()
    if not root.is_dir():
        _problem(registry, f"environment directory {root} does not exist")
        return
    for path in sorted(root.iterdir()):
        if path.name.startswith("."):
            continue
        try:
            environment = parse(path.read_bytes(), str(path))
        except OSError as error:
            _problem(registry, f"environment {path}: cannot be read: {error}")
            continue
        except (TemplateError, TemplateErrors) as error:
            _problem(registry, f"environment {path}: {error}")
            continue
        LOG.info("Loading global environment %s", path)
        load_global_registry(registry, environment.resource_registry, root)


def load_global_registry(registry: ResourceRegistry, snippet: Mapping[str, Any], base: Path | None = None) -> None:
    """Load one global environment's ``resource_registry`` into ``registry``."""
    for key, value in snippet.items():
        if value is None:
            # Heat's global registry holds the plugins too: null removes them as well.
            for name in [name for name in registry.types if (name.startswith(key[:-1]) if key.endswith("*") else name == key)]:
                LOG.warning("Removing %s from the global registry", name)
                del registry.types[name]
    registry.environment = load_registry(registry.environment, snippet)
    for name in _template_names(snippet):
        if name in registry.environment_files:
            continue
        try:
            registry.environment_files[name] = _template_path(name, base).read_text()
        except (OSError, ValueError) as error:
            _problem(registry, f"global environment template {name}: cannot be read: {error}")


def _template_names(level: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for key, value in level.items():
        if isinstance(value, Mapping):
            names |= _template_names(value)
        elif isinstance(value, str) and key not in ("hooks", "restricted_actions"):
            if key.endswith(TEMPLATE_SUFFIXES):
                names.add(key)
            elif value.endswith(TEMPLATE_SUFFIXES):
                names.add(value)
        elif isinstance(value, list):  # candidate templates (environment.capabilities)
            names |= {item for item in value if isinstance(item, str) and item.endswith(TEMPLATE_SUFFIXES)}
    return names


def _template_path(name: str, base: Path | None) -> Path:
    url = urlparse(name)
    if url.scheme == "file":
        return Path(unquote(url.path))
    if url.scheme:
        # Heat's global templates are local only (LOCAL_SCHEMES).
        raise ValueError(f"only file:// URLs and paths are read, not {url.scheme}://")
    path = Path(name).expanduser()
    return path if path.is_absolute() or base is None else base / path


def _problem(registry: ResourceRegistry, message: str) -> None:
    LOG.warning(message)
    registry.problems.append(message)
