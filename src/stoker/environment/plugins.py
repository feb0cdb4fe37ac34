"""Loading resource plugins from ``plugin_dirs`` (seed 001, "配置引擎").

Every ``.py`` file under a plugin directory is imported as its own module and asked for
``resource_mapping()``, ``available_resource_mapping()`` and ``constraint_mapping()``.
Any directory named ``tests`` is never loaded. A plugin that fails to import or declares
an invalid schema is reported and skipped; it never stops the engine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

from stoker.environment.registry import ResourceRegistry
from stoker.sdk import compat

LOG = logging.getLogger(__name__)


def _module_files(directory: Path) -> list[Path]:
    found = []
    for path in sorted(directory.rglob("*.py")):
        relative = path.relative_to(directory)
        # Only a ``tests`` directory is left out (the guide's words): a top-level
        # ``test_*.py`` is a module like any other.
        if "tests" in relative.parts[:-1]:
            continue
        if any(part.startswith(".") for part in relative.parts):
            continue
        found.append(path)
    return found


def load_plugin_dirs(registry: ResourceRegistry, directories: Iterable[str | Path]) -> None:
    directories = list(directories)
    if directories:
        # Plugins written for Heat import heat.engine.*; serve them stoker's SDK.
        compat.install()
    for directory in directories:
        root = Path(directory).expanduser()
        if not root.is_dir():
            message = f"plugin directory {root} does not exist"
            LOG.warning(message)
            registry.problems.append(message)
            continue
        for path in _module_files(root):
            load_plugin_file(registry, path)


def load_plugin_file(registry: ResourceRegistry, path: Path) -> None:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    module_name = f"stoker_plugin_{path.stem}_{digest}"
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError("not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        # What the SDK warns of while the plugin's classes are built (an unknown support
        # status, which becomes UNKNOWN as in Heat) is reported with the plugin's path.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - any failure of a plugin is reported, not raised
        sys.modules.pop(module_name, None)
        message = f"plugin {path}: failed to load: {type(error).__name__}: {error}"
        LOG.warning(message)
        registry.problems.append(message)
        return
    for caught_warning in caught:
        if not issubclass(caught_warning.category, UserWarning):
            # Not the plugin author's to hear about (a library's deprecation): as usual.
            warnings.warn_explicit(caught_warning.message, caught_warning.category, caught_warning.filename, caught_warning.lineno)
            continue
        message = f"plugin {path}:{caught_warning.lineno}: {caught_warning.message}"
        LOG.warning(message)
        registry.problems.append(message)
    for function_name in ("resource_mapping", "available_resource_mapping"):
        function = getattr(module, function_name, None)
        if function is None:
            continue
        try:
            mapping = function() or {}
        except Exception as error:  # noqa: BLE001
            message = f"plugin {path}: {function_name}() failed: {type(error).__name__}: {error}"
            LOG.warning(message)
            registry.problems.append(message)
            continue
        registry.register_mapping(mapping, str(path))
    client_mapping = getattr(module, "client_mapping", None)
    if client_mapping is not None:
        try:
            registry.clients.register_mapping(client_mapping() or {}, str(path))
            registry.problems.extend(registry.clients.problems)
            registry.clients.problems.clear()
        except Exception as error:  # noqa: BLE001
            registry.problems.append(f"plugin {path}: client_mapping() failed: {type(error).__name__}: {error}")
    constraint_mapping = getattr(module, "constraint_mapping", None)
    if constraint_mapping is not None:
        try:
            registry.constraints.update(constraint_mapping() or {})
        except Exception as error:  # noqa: BLE001
            registry.problems.append(f"plugin {path}: constraint_mapping() failed: {error}")
