"""Safe loading of template and environment text into plain data plus a source map.

Owns: the size limit, YAML with the libyaml C parser and only the safe tags, bounds on
alias expansion (nodes and bytes) and nesting depth, JSON, and the map from template path
to file/line/column used by every error message. Reading the YAML itself (the safe
loader, streaming or composing, measuring aliases, building data) is ``yaml_reader.py``'s.
Must not: interpret template sections; that is ``stoker.template.hot``.

Values are Heat's (heat/common/template_format.py): a template is read as JSON first
(``jsonutils.loads``), and only text JSON refuses is read as YAML; an environment is read
as YAML only (environment_format.py). YAML follows PyYAML's YAML 1.1 rules through Heat's
``yaml_loader`` (a safe loader whose timestamps stay strings): ``yes``/``on`` are booleans,
``1e2`` (no dot) is the string "1e2", ``2013-05-23`` a string. A key written twice in one
map is last-wins, as in both of Heat's readers; stoker says so in a ``TemplateWarning``
(``Document.warnings``) instead of refusing the text.

A NUL character (U+0000) is refused, in the text or made by an escape (YAML's ``"\0"``,
``"\x00"``, ``"\u0000"``; JSON's ``"\u0000"``), at its line and column: PostgreSQL
cannot store one, and stoker refuses it on every database alike (``nul_place``, which
the service also applies to data a client sent already parsed).
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from stoker.template.errors import (
    Location,
    TemplateError,
    TemplateLimitError,
    TemplateSyntaxError,
    TemplateWarning,
    format_path,
)
from stoker.template.yaml_reader import (
    _Builder,
    _compose,
    _duplicate_warning,
    _Fallback,
    _Loader,
    _measure,
    _stream,
    _syntax_error,
    is_parser_nesting_error,
    nesting_error,
)

DEFAULT_MAX_TEMPLATE_BYTES = 512 * 1024  # Heat's max_template_size
DEFAULT_MAX_NODES = 2_000_000  # nodes after alias expansion
DEFAULT_MAX_DEPTH = 200
# The document's size with every alias written out (its JSON text, in bytes): four times
# the text a template may have. Aliases share one object when loaded, but every copy is
# stored and walked, and a function given many aliases of one long string (list_join)
# would build the whole expansion.
DEFAULT_MAX_EXPANDED_BYTES = 4 * DEFAULT_MAX_TEMPLATE_BYTES


@dataclass(slots=True)
class Document:
    """Parsed data and where each node came from."""

    data: Any
    file: str | None = None
    # What Heat reads silently but an author may not mean (a key written twice).
    warnings: list[TemplateWarning] = field(default_factory=list)
    # formatted template path ("resources.web.properties") -> (line, column). A loaded
    # document works them out from its text on the first ``locate``: only error messages
    # need them, and recording a path per node cost about a third of loading.
    _positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False, compare=False)
    _source: tuple[str, Limits] | None = field(default=None, repr=False, compare=False)

    @property
    def positions(self) -> dict[str, tuple[int, int]]:
        if self._positions is None:
            try:
                self._positions = _positions(*self._source, self.file) if self._source is not None else {}
            except (yaml.YAMLError, TemplateError):  # JSON text YAML refuses (a tab): no positions
                self._positions = {}
            self._source = None
        return self._positions

    def locate(self, path: str | tuple | None) -> Location | None:
        """The closest known position for ``path`` (walking up to a parent)."""
        positions = self.positions
        probe = format_path(path) if isinstance(path, tuple) else (path or "")
        while True:
            position = positions.get(probe)
            if position is not None:
                return Location(self.file, position[0], position[1])
            if not probe:
                return None
            cut = max(probe.rfind("."), probe.rfind("["))
            probe = probe[:cut] if cut > 0 else ""


@dataclass(frozen=True, slots=True)
class Limits:
    max_bytes: int = DEFAULT_MAX_TEMPLATE_BYTES
    max_nodes: int = DEFAULT_MAX_NODES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_expanded_bytes: int = DEFAULT_MAX_EXPANDED_BYTES


DEFAULT_LIMITS = Limits()


def load(text: str | bytes, file: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Parse YAML text (JSON read as YAML). Errors carry the file, line and column."""
    return _load(text, file, limits, json_fallback=False)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a document loads.

    Loading allocates objects for every YAML item (parser events and their marks, nodes
    when a document is composed, then the data); none of them forms a cycle that
    outlives the load (a recursive alias's cycle is refused and left to the collector).
    Left running, the collector scanned the growing data again and again: at 10,000
    resources it took two thirds of the load. Reference counting frees everything as
    usual meanwhile. The switch is process-wide: other threads' garbage waits for the
    length of a load, and the collector is turned back on only by the load that turned
    it off (a concurrent load finding it off leaves it alone).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _load(text: str | bytes, file: str | None, limits: Limits, json_fallback: bool, json_first: bool = False) -> Document:
    with _collector_paused():
        document = _read(text, file, limits, json_fallback, json_first)
    if _NUL_ESCAPE.search(text) if isinstance(text, str) else _NUL_ESCAPE_BYTES.search(text):
        _refuse_nul(document)
    return document


# Why NUL is refused, and what to do about it.
NUL_HINT = "remove the NUL character: no text stoker keeps may hold one, on any database"
# An escape that may make a NUL character: YAML's \0, \x00, \u0000 and \U00000000 (in
# double quotes), JSON's \u0000. Text without one cannot hold a NUL once loaded, and
# needs no walk of its data.
_NUL_ESCAPE = re.compile(r"\\(?:0|x00|u0000|U00000000)")
_NUL_ESCAPE_BYTES = re.compile(_NUL_ESCAPE.pattern.encode())


def nul_place(data: Any) -> tuple[Any, ...] | None:
    """The path (keys and indexes) of the first string, key or value, of ``data`` that
    holds a NUL character; None when none does. Iterative: deep data cannot exhaust
    the stack."""
    pending: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while pending:
        value, path = pending.pop()
        if isinstance(value, str):
            if "\x00" in value:
                return path
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    return (*path, key)
                pending.append((item, (*path, key)))
        elif isinstance(value, list):
            pending.extend((item, (*path, index)) for index, item in enumerate(value))
    return None


def shown_path(path: tuple[Any, ...]) -> str:
    """A path as errors show it, a NUL written as ``\\0``."""
    return format_path(step.replace("\x00", "\\0") if isinstance(step, str) else step for step in path)


def _refuse_nul(document: Document, text: str | None = None) -> None:
    """Refuse a loaded document holding a NUL character, at its place: the node's, or
    without positions (strict JSON), the first escape of ``text`` that may make one."""
    path = nul_place(document.data)
    if path is None:
        return
    location = document.locate(format_path(path))
    if location is None and text is not None:
        escape = _NUL_ESCAPE.search(text)
        if escape is not None:
            location = _located(text, escape.start(), document.file)
    raise TemplateSyntaxError("A NUL character (\\0) is not allowed in a template or environment", path=shown_path(path) or None, location=location, hint=NUL_HINT)


def _raw_nul(text: str, file: str | None) -> TemplateSyntaxError:
    """The error for a NUL character written in the text itself, at its place."""
    return TemplateSyntaxError("A NUL character (\\0) is not allowed in a template or environment", location=_located(text, text.index("\x00"), file), hint=NUL_HINT)


def _located(text: str, offset: int, file: str | None) -> Location:
    line = text.count("\n", 0, offset) + 1
    return Location(file, line, offset - (text.rfind("\n", 0, offset) + 1) + 1)


def _read(text: str | bytes, file: str | None, limits: Limits, json_fallback: bool, json_first: bool = False) -> Document:
    size = len(text)
    if size > limits.max_bytes:
        raise TemplateLimitError(
            f"Template size ({size} bytes) exceeds maximum allowed size ({limits.max_bytes} bytes)",
            location=Location(file, 1, 1),
            hint="split it into nested templates or raise max_template_size",
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TemplateSyntaxError(f"The template is not UTF-8 text: {error}", location=Location(file, 1, 1))
    if "\x00" in text:  # YAML refuses it too, but by offset, not at its line and column
        raise _raw_nul(text, file)
    if json_first and text.lstrip().startswith("{"):
        document = _json_first(text, file, limits)
        if document is not None:
            return document
    loader = _Loader(text)
    try:
        try:
            return Document(_stream(loader, limits), file, _source=(text, limits))
        except _Fallback:
            loader.dispose()
            loader = _Loader(text)
        node, aliased = _compose(loader, file, limits)
    except yaml.MarkedYAMLError as error:
        if is_parser_nesting_error(error):
            raise nesting_error(error, text, file, limits)
        # YAML refuses some valid JSON (a tab where YAML wants indentation): read it as JSON.
        if json_fallback and text.lstrip().startswith("{"):
            return load_json(text.lstrip(), file, limits)
        raise _syntax_error(error, file, text)
    except yaml.YAMLError as error:
        raise TemplateSyntaxError(f"Invalid YAML: {error}", location=Location(file, 1, 1))
    finally:
        loader.dispose()
    if node is None:
        return Document(None, file)
    try:
        if aliased:  # without aliases the tree is as small and as shallow as the text
            _measure(node, file, limits)
        builder = _Builder(loader, file, limits)
        data = builder.build(node, None, 0)
    except RecursionError:  # only with a max_depth above Python's recursion limit
        raise TemplateLimitError("The document is nested too deeply to parse", location=Location(file, 1, 1))
    except TemplateLimitError:
        raise  # _measure's: no path to report, and a second look would cost as much
    except TemplateError:
        # Built again, recording paths, so the error says where it is (the same one is
        # raised: the text has not changed).
        _positions(text, limits, file)
        raise
    if builder.duplicated:
        # Rare: built again with paths, so each warning names its place.
        with_paths = _built_with_paths(text, limits, file)
        return Document(data, file, with_paths.warnings, _positions=with_paths.positions)
    return Document(data, file, _source=(text, limits))


def _positions(text: str, limits: Limits, file: str | None) -> dict[str, tuple[int, int]]:
    """Every node's position by path, from a fresh composition of ``text`` (which has
    been loaded once already, so it is within the limits)."""
    return _built_with_paths(text, limits, file).positions


def _built_with_paths(text: str, limits: Limits, file: str | None) -> _Builder:
    """A builder that has built ``text`` (composed afresh: building flattens merge keys
    in the nodes) recording every node's path and position, and warnings by path."""
    loader = _Loader(text)
    try:
        node, _ = _compose(loader, file, limits)
    finally:
        loader.dispose()
    builder = _Builder(loader, file, limits)
    if node is not None:
        builder.build(node, "", 0)
    return builder


class _JSONDuplicates:
    """``object_pairs_hook`` for json: last-wins maps (as ``json.loads`` builds them),
    noting each key written twice."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.keys.append(key)
                seen.add(key)
        return result


def _json_first(text: str, file: str | None, limits: Limits) -> Document | None:
    """The template as Heat's ``template_format.simple_parse`` reads it when its text is
    JSON (``jsonutils.loads`` before any YAML): JSON's numbers (``1e2`` is 100.0) and
    last-wins keys. None when the text is not JSON (YAML then reads it)."""
    duplicates = _JSONDuplicates()
    try:
        data = json.loads(text, object_pairs_hook=duplicates)
    except ValueError:
        return None
    except RecursionError:
        raise _json_depth_error(text, file, limits.max_depth) or TemplateLimitError(
            "The document is nested too deeply to parse", location=Location(file, 1, 1)
        )
    depth_exceeded, nodes = _shape(data, limits.max_depth)
    if depth_exceeded:
        raise _json_depth_error(text, file, limits.max_depth) or TemplateLimitError(
            f"The document is nested more than {limits.max_depth} levels deep", location=Location(file, 1, 1)
        )
    if nodes > limits.max_nodes:
        raise TemplateLimitError(f"The document expands to more than {limits.max_nodes} nodes", location=Location(file, 1, 1))
    document = Document(data, file, _source=(text, limits))
    if duplicates.keys:
        try:  # JSON is YAML too (unless it has tabs): YAML's reading gives the places
            with_paths = _built_with_paths(text, limits, file)
        except (yaml.YAMLError, TemplateError):
            document.warnings = [_duplicate_warning(key, None, None, None) for key in duplicates.keys]
        else:
            document.warnings = with_paths.warnings
    return document


def _shape(data: Any, max_depth: int) -> tuple[bool, int]:
    """Whether ``data`` nests lists and maps more than ``max_depth`` deep (the root
    container is at depth 1, as the YAML reader counts), and how many nodes it has
    (keys not counted, as the YAML reader counts items)."""
    nodes = 1
    pending = [(data, 1)] if isinstance(data, (dict, list)) else []
    while pending:
        node, depth = pending.pop()
        if depth > max_depth:
            return True, nodes
        children = node.values() if type(node) is dict else node
        nodes += len(children)
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False, nodes


def _json_depth_error(text: str, file: str | None, max_depth: int) -> TemplateLimitError | None:
    """Find nesting past ``max_depth`` by a linear scan (strings skipped), before json
    recurses into it."""
    depth = 0
    line, column = 1, 0
    in_string = escaped = False
    for char in text:
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return TemplateLimitError(
                    f"The document is nested more than {max_depth} levels deep", location=Location(file, line, column)
                )
        elif char in "]}":
            depth -= 1
    return None


def load_json(text: str, file: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Strict JSON (used when YAML refuses text that is valid JSON, e.g. with tabs).

    Positions are not tracked; errors fall back to the nearest known place. A key
    written twice is last-wins, with a warning, as ``json.loads`` reads it."""
    if len(text) > limits.max_bytes:
        raise TemplateLimitError(
            f"Template size ({len(text)} bytes) exceeds maximum allowed size ({limits.max_bytes} bytes)",
            location=Location(file, 1, 1),
        )
    too_deep = _json_depth_error(text, file, limits.max_depth)
    if too_deep is not None:
        raise too_deep
    duplicates = _JSONDuplicates()
    try:
        data = json.loads(text, object_pairs_hook=duplicates)
    except json.JSONDecodeError as error:
        raise TemplateSyntaxError(f"Invalid JSON: {error.msg}", location=Location(file, error.lineno, error.colno))
    except RecursionError:
        raise TemplateLimitError("The document is nested too deeply to parse", location=Location(file, 1, 1))
    document = Document(data, file, [_duplicate_warning(key, None, None, None) for key in duplicates.keys])
    if _NUL_ESCAPE.search(text):
        _refuse_nul(document, text)
    return document


def parse(text: str | bytes, file: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Load a template as Heat's template_format.parse does: text that starts like a JSON
    object is read as JSON first, anything else (or JSON refuses) as YAML.

    A document YAML reads but refuses (tags, limits) stays refused.
    """
    return _load(text, file, limits, json_fallback=True, json_first=True)


def parse_environment(text: str | bytes, file: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Load an environment as Heat's environment_format.parse does: as YAML, JSON text
    included (so ``1e2`` there is the string "1e2"). Text that starts like a JSON object
    and that YAML refuses (a tab where YAML wants indentation) is read as JSON."""
    return _load(text, file, limits, json_fallback=True)
