"""Safe loading of template and environment text into plain data plus a source map.

Owns: the size limit, YAML with the libyaml C parser and only the safe tags (timestamps
kept as strings as Heat does), a bound on alias expansion and nesting depth, JSON, and
the map from template path to file/line/column used by every error message.
Must not: interpret template sections; that is ``stoker.template.hot``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from stoker.template.errors import Location, TemplateLimitError, TemplateSyntaxError, format_path

try:  # The C parser is many times faster; PyYAML wheels ship it.
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - only without libyaml
    _BaseLoader = yaml.SafeLoader  # type: ignore[misc]

DEFAULT_MAX_TEMPLATE_BYTES = 512 * 1024  # Heat's max_template_size
DEFAULT_MAX_NODES = 2_000_000  # nodes after alias expansion
DEFAULT_MAX_DEPTH = 200


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that keeps timestamps and dates as strings (``heat_template_version``)."""


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_str)
_Loader.add_constructor("tag:yaml.org,2002:str", _construct_str)


@dataclass(slots=True)
class Document:
    """Parsed data and where each node came from."""

    data: Any
    file: str | None = None
    # formatted template path ("resources.web.properties") -> (line, column)
    positions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: str | tuple | None) -> Location | None:
        """The closest known position for ``path`` (walking up to a parent)."""
        probe = format_path(path) if isinstance(path, tuple) else (path or "")
        while True:
            position = self.positions.get(probe)
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


DEFAULT_LIMITS = Limits()


def load(text: str | bytes, file: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Parse YAML or JSON text. Errors carry the file, line and column."""
    return _load(text, file, limits, json_fallback=False)


def _load(text: str | bytes, file: str | None, limits: Limits, json_fallback: bool) -> Document:
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
    loader = _Loader(text)
    try:
        node, aliased = _compose(loader, file, limits)
    except yaml.MarkedYAMLError as error:
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
    builder = _Builder(loader, file, limits)
    try:
        if aliased:  # without aliases the tree is as small and as shallow as the text
            _measure(node, file, limits)
        data = builder.build(node, "", 0)
    except RecursionError:  # only with a max_depth above Python's recursion limit
        raise TemplateLimitError("The document is nested too deeply to parse", location=Location(file, 1, 1))
    return Document(data, file, builder.positions)


_COLLECTION_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_END_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _compose(loader: yaml.SafeLoader, file: str | None, limits: Limits) -> tuple[yaml.Node | None, bool]:
    """Compose the one document into nodes, from parser events and without recursion.

    libyaml's own composer recurses in C and crashes the process on deeply nested input,
    and its scanner slows down with every level of flow nesting; so the nesting depth is
    checked event by event and reading stops as soon as it passes ``max_depth``.
    Anchors are registered before their content, as PyYAML's composer does, so a
    recursive alias composes into a cycle that ``_measure`` then refuses.
    Returns the root node (None for an empty document) and whether any alias was used.
    """
    loader.get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        loader.get_event()
        return None, False
    loader.get_event()  # DocumentStart
    anchors: dict[str, yaml.Node] = {}
    # Open collections; for a mapping, the key node waiting for its value.
    stack: list[list[Any]] = []
    root: yaml.Node | None = None
    aliased = False
    while root is None:
        event = loader.get_event()
        if isinstance(event, _END_EVENTS):
            node = stack.pop()[0]
            node.end_mark = event.end_mark
        elif isinstance(event, yaml.AliasEvent):
            node = anchors.get(event.anchor)
            if node is None:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                )
            aliased = True
        else:
            if event.anchor is not None and event.anchor in anchors:
                first = anchors[event.anchor].start_mark
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"found duplicate anchor {event.anchor!r} (first defined on line {first.line + 1})",
                    event.start_mark,
                )
            if isinstance(event, yaml.ScalarEvent):
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
                node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
                if event.anchor is not None:
                    anchors[event.anchor] = node
            elif isinstance(event, _COLLECTION_EVENTS):
                if len(stack) >= limits.max_depth:
                    mark = event.start_mark
                    raise TemplateLimitError(
                        f"The document is nested more than {limits.max_depth} levels deep",
                        location=Location(file, mark.line + 1, mark.column + 1),
                    )
                kind = yaml.SequenceNode if isinstance(event, yaml.SequenceStartEvent) else yaml.MappingNode
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(kind, None, event.implicit)
                node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
                if event.anchor is not None:
                    anchors[event.anchor] = node
                stack.append([node, None])
                continue
            else:  # pragma: no cover - the parser emits no other event inside a document
                raise yaml.composer.ComposerError(None, None, f"unexpected {event}", event.start_mark)
        if not stack:
            root = node
            continue
        parent = stack[-1]
        if isinstance(parent[0], yaml.SequenceNode):
            parent[0].value.append(node)
        elif parent[1] is None:
            parent[1] = node
        else:
            parent[0].value.append((parent[1], node))
            parent[1] = None
    loader.get_event()  # DocumentEnd
    if not loader.check_event(yaml.StreamEndEvent):
        event = loader.get_event()
        raise yaml.composer.ComposerError(
            "expected a single document in the stream", None, "but found another document", event.start_mark
        )
    return root, aliased


def _measure(root: yaml.Node, file: str | None, limits: Limits) -> None:
    """Refuse a document whose aliases expand past ``max_nodes`` or ``max_depth``, or
    refer to themselves, before anything is expanded.

    Every alias shares its anchor's node, so each distinct node is measured once
    (its expanded size and height are memoised): a "billion laughs" document costs as
    much as its text, not as much as its expansion.
    """
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded size, height)
    open_nodes: set[int] = set()

    def fail(message: str, node: yaml.Node, hint: str | None = None) -> TemplateLimitError:
        mark = node.start_mark
        return TemplateLimitError(message, location=Location(file, mark.line + 1, mark.column + 1), hint=hint)

    def visit(node: yaml.Node, depth: int) -> tuple[int, int]:
        known = measured.get(id(node))
        if known is None:
            if id(node) in open_nodes:
                raise fail("A YAML alias refers to the collection that contains it", node)
            if depth > limits.max_depth:
                raise fail(f"The document is nested more than {limits.max_depth} levels deep", node)
            size, height = 1, 0
            if not isinstance(node, yaml.ScalarNode):
                open_nodes.add(id(node))
                children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
                for child in children:
                    child_size, child_height = visit(child, depth + 1)
                    size += child_size
                    height = max(height, child_height + 1)
                    if size > limits.max_nodes:
                        raise fail(
                            f"The document expands to more than {limits.max_nodes} nodes",
                            node,
                            hint="YAML aliases expand to copies; use fewer or smaller anchors",
                        )
                open_nodes.discard(id(node))
            known = measured[id(node)] = (size, height)
        if depth + known[1] > limits.max_depth:
            raise fail(f"The document is nested more than {limits.max_depth} levels deep", node)
        return known

    visit(root, 0)


def _syntax_error(error: yaml.MarkedYAMLError, file: str | None, text: str) -> TemplateSyntaxError:
    mark = error.problem_mark or error.context_mark
    location = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file, 1, 1)
    problem = error.problem or str(error)
    if error.context:
        problem = f"{problem} ({error.context})"
    hint = None
    # libyaml does not say "tab": look at the line's indentation and where it stopped.
    lines = text.splitlines()
    line = lines[mark.line] if mark and mark.line < len(lines) else ""
    indentation = line[: len(line) - len(line.lstrip())]
    if "\t" in indentation or (mark and line[mark.column : mark.column + 1] == "\t") or "tab" in problem:
        hint = "indent with spaces, not tabs"
    return TemplateSyntaxError(f"Invalid YAML: {problem}", location=location, hint=hint)


_COLLECTION_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})


def _child(path: str, step: object) -> str:
    """The path of a child, spelled as ``format_path`` spells it."""
    if isinstance(step, int):
        return f"{path}[{step}]"
    return f"{path}.{step}" if path else str(step)


class _Builder:
    """Turns a composed (and measured) node graph into plain data and positions.

    Node count and depth are checked again as data is built, as a second line of defence
    behind ``_measure``.
    """

    def __init__(self, loader: yaml.SafeLoader, file: str | None, limits: Limits):
        self.loader = loader
        self.file = file
        self.limits = limits
        self.count = 0
        self.positions: dict[str, tuple[int, int]] = {}

    def _location(self, node: yaml.Node) -> Location:
        mark = node.start_mark
        return Location(self.file, mark.line + 1, mark.column + 1)

    def _fail(self, message: str, node: yaml.Node, path: str, hint: str | None = None) -> TemplateLimitError:
        return TemplateLimitError(message, path=path or None, location=self._location(node), hint=hint)

    def _unsupported_tag(self, node: yaml.Node, path: str) -> TemplateSyntaxError:
        return TemplateSyntaxError(
            f"Unsupported YAML tag {node.tag!r}: only plain YAML/JSON data is allowed",
            path=path or None,
            location=self._location(node),
        )

    def build(self, node: yaml.Node, path: str, depth: int) -> Any:
        self.count += 1
        if self.count > self.limits.max_nodes:
            raise self._fail(
                f"The document expands to more than {self.limits.max_nodes} nodes",
                node,
                path,
                hint="YAML aliases expand to copies; use fewer or smaller anchors",
            )
        if depth > self.limits.max_depth:
            raise self._fail(f"The document is nested more than {self.limits.max_depth} levels deep", node, path)
        self.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if not isinstance(node, yaml.ScalarNode) and node.tag not in _COLLECTION_TAGS:
            raise self._unsupported_tag(node, path)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, _child(path, index), depth + 1) for index, item in enumerate(node.value)]
        return self._scalar(node, path)

    def _mapping(self, node: yaml.MappingNode, path: str, depth: int) -> dict[Any, Any]:
        own = len(node.value)
        try:
            self.loader.flatten_mapping(node)
        except yaml.constructor.ConstructorError as error:
            mark = error.problem_mark or node.start_mark
            raise TemplateSyntaxError(
                f"Invalid YAML merge: {error.problem}",
                path=path or None,
                location=Location(self.file, mark.line + 1, mark.column + 1),
            )
        # flatten_mapping puts the merged (``<<``) entries first; the mapping's own keys
        # follow and override them. Only a key written twice in the mapping itself is a
        # duplicate.
        merged = len(node.value) - own
        result: dict[Any, Any] = {}
        seen: set[Any] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            if not isinstance(key_node, yaml.ScalarNode):
                raise TemplateSyntaxError(
                    "A mapping key must be a string or another scalar, not a list or map",
                    path=path or None,
                    location=self._location(key_node),
                )
            key = self._scalar(key_node, path)
            child = _child(path, key)
            if index >= merged:
                if key in seen:
                    raise TemplateSyntaxError(f"Duplicate key {key!r}", path=child, location=self._location(key_node))
                seen.add(key)
            result[key] = self.build(value_node, child, depth + 1)
        return result

    def _scalar(self, node: yaml.ScalarNode, path: str) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as error:
            raise self._unsupported_tag(node, path) from error
        except (ValueError, KeyError, TypeError) as error:  # e.g. ``!!int abc``
            raise TemplateSyntaxError(
                f"Invalid value {node.value!r} for YAML tag {node.tag!r}",
                path=path or None,
                location=self._location(node),
            ) from error


class _DuplicateKeyError(ValueError):
    pass


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


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

    Positions are not tracked; errors fall back to the nearest known place."""
    if len(text) > limits.max_bytes:
        raise TemplateLimitError(
            f"Template size ({len(text)} bytes) exceeds maximum allowed size ({limits.max_bytes} bytes)",
            location=Location(file, 1, 1),
        )
    too_deep = _json_depth_error(text, file, limits.max_depth)
    if too_deep is not None:
        raise too_deep
    try:
        return Document(json.loads(text, object_pairs_hook=_reject_duplicates), file)
    except json.JSONDecodeError as error:
        raise TemplateSyntaxError(f"Invalid JSON: {error.msg}", location=Location(file, error.lineno, error.colno))
    except _DuplicateKeyError as error:
        raise TemplateSyntaxError(f"Duplicate key {error.args[0]!r}", location=Location(file, 1, 1))
    except RecursionError:
        raise TemplateLimitError("The document is nested too deeply to parse", location=Location(file, 1, 1))


def parse(text: str | bytes, file: str | None = None, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Load a template or environment: YAML (JSON is YAML too), JSON as a fallback.

    The fallback applies only when the YAML parser refuses text that starts like a JSON
    object; a document YAML reads but refuses (duplicate keys, tags, limits) stays refused.
    """
    return _load(text, file, limits, json_fallback=True)
