"""Reading YAML into plain data within the loader's limits, for ``loader.py``.

Owns: the safe loader (only the safe tags; timestamps stay strings, as Heat's
``yaml_loader`` keeps them), the two ways a document is read (``_stream``, straight from
parser events, for plain data; and for anything else ``_compose`` into nodes without
recursion, ``_measure`` of what aliases expand to, and ``_Builder`` from nodes to data,
with paths and positions when asked), the syntax error a parser error becomes, and the
warning for a key written twice.
Must not: choose between JSON and YAML, check the text's size or make a ``Document``
(``loader.py`` does), nor interpret template sections (``hot.py`` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from stoker.template.errors import (
    Location,
    TemplateLimitError,
    TemplateSyntaxError,
    TemplateWarning,
)

if TYPE_CHECKING:
    from stoker.template.loader import Limits

try:  # The C parser is many times faster; PyYAML wheels ship it.
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - only without libyaml
    _BaseLoader = yaml.SafeLoader


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that keeps timestamps and dates as strings (``heat_template_version``)."""


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_str)
_Loader.add_constructor("tag:yaml.org,2002:str", _construct_str)


def _duplicate_warning(key: Any, path: str | None, location: Location | None, first_line: int | None) -> TemplateWarning:
    first = f" (first on line {first_line})" if first_line else ""
    return TemplateWarning(
        f"Duplicate key {key!r}{first}: the last value is used, as Heat reads it",
        path=path or None,
        location=location,
        hint="remove all but one of them",
    )


# What the composer does with each kind of parser event (looked up by exact type: the C
# parser makes instances of these classes, and a lookup is cheaper than isinstance tests).
_SCALAR, _ALIAS, _START, _END = range(4)
_EVENT_KINDS: dict[type, int] = {
    yaml.ScalarEvent: _SCALAR,
    yaml.AliasEvent: _ALIAS,
    yaml.SequenceStartEvent: _START,
    yaml.MappingStartEvent: _START,
    yaml.SequenceEndEvent: _END,
    yaml.MappingEndEvent: _END,
}


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
    get_event, resolve, max_depth = loader.get_event, loader.resolve, limits.max_depth
    ScalarNode, SequenceNode = yaml.ScalarNode, yaml.SequenceNode  # noqa: N806 - classes
    anchors: dict[str, yaml.Node] = {}
    # A template repeats the same plain scalars (keys, types) many times over.
    scalar_tags: dict[tuple[str, Any], str] = {}
    # Open collections; for a mapping, the key node waiting for its value.
    stack: list[list[Any]] = []
    root: yaml.Node | None = None
    aliased = False
    while root is None:
        event = get_event()
        kind = _EVENT_KINDS.get(type(event))
        if kind == _SCALAR:
            if event.anchor is not None:
                _check_anchor(anchors, event)
            tag = event.tag
            if tag is None or tag == "!":
                key = (event.value, event.implicit)
                tag = scalar_tags.get(key)
                if tag is None:
                    tag = scalar_tags[key] = resolve(ScalarNode, event.value, event.implicit)
            node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            if event.anchor is not None:
                anchors[event.anchor] = node
        elif kind == _END:
            node = stack.pop()[0]
            node.end_mark = event.end_mark
        elif kind == _START:
            if event.anchor is not None:
                _check_anchor(anchors, event)
            if len(stack) >= max_depth:
                mark = event.start_mark
                raise TemplateLimitError(
                    f"The document is nested more than {max_depth} levels deep",
                    location=Location(file, mark.line + 1, mark.column + 1),
                )
            node_class = SequenceNode if type(event) is yaml.SequenceStartEvent else yaml.MappingNode
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(node_class, None, event.implicit)
            node = node_class(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if event.anchor is not None:
                anchors[event.anchor] = node
            stack.append([node, None])
            continue
        elif kind == _ALIAS:
            node = anchors.get(event.anchor)
            if node is None:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                )
            aliased = True
        else:  # pragma: no cover - the parser emits no other event inside a document
            raise yaml.composer.ComposerError(None, None, f"unexpected {event}", event.start_mark)
        if not stack:
            root = node
            continue
        parent = stack[-1]
        if type(parent[0]) is SequenceNode:
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


class _Fallback(Exception):
    """The document needs the composed path: it uses anchors, aliases, merge keys or tags
    beyond plain data, breaks a limit, or has a mistake to report with its path."""


# Tags whose scalars are their text: strings, and timestamps as Heat keeps them.
_TEXT_TAGS = frozenset({"tag:yaml.org,2002:str", "tag:yaml.org,2002:timestamp"})
_NO_KEY = object()


def _stream(loader: yaml.SafeLoader, limits: Limits) -> Any:
    """Build the data straight from parser events, with no node tree: the way most
    templates load, at a fraction of the time and memory (a node and two marks per
    item otherwise live until the whole document is composed).

    Anything out of the ordinary raises ``_Fallback``, and the document is composed
    instead (``_compose``, ``_measure``, ``_Builder``), which reports mistakes with their
    place. So this path only needs to recognise what it handles; everything it accepts,
    the composed path accepts with the same data. Parser errors come out as they are.
    """
    get_event, resolve = loader.get_event, loader.resolve
    get_event()  # StreamStart
    if loader.check_event(yaml.StreamEndEvent):
        return None
    get_event()  # DocumentStart
    constructors = loader.yaml_constructors
    scalar_tags: dict[tuple[str, Any], str] = {}
    max_depth, max_nodes = limits.max_depth, limits.max_nodes
    count = 0
    # Open collections: [the list or dict, for a dict the key waiting for its value].
    stack: list[list[Any]] = []
    while True:
        event = get_event()
        kind = _EVENT_KINDS.get(type(event))
        if kind == _SCALAR:
            if event.anchor is not None:
                raise _Fallback
            tag = event.tag
            if tag is None or tag == "!":
                key = (event.value, event.implicit)
                tag = scalar_tags.get(key)
                if tag is None:
                    tag = scalar_tags[key] = resolve(yaml.ScalarNode, event.value, event.implicit)
            if tag in _TEXT_TAGS:
                value = event.value
            elif tag in _PLAIN_SCALAR_TAGS:
                node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
                try:
                    value = constructors[tag](loader, node)
                except (yaml.YAMLError, ValueError, KeyError, TypeError):
                    raise _Fallback
            else:  # merge keys, binary, sets, custom tags...
                raise _Fallback
        elif kind == _START:
            tag = event.tag
            if event.anchor is not None or len(stack) >= max_depth or (tag is not None and tag != "!" and tag not in _COLLECTION_TAGS):
                raise _Fallback
            if stack and type(stack[-1][0]) is dict and stack[-1][1] is _NO_KEY:
                raise _Fallback  # a list or map as a mapping key
            stack.append([{} if type(event) is yaml.MappingStartEvent else [], _NO_KEY])
            continue
        elif kind == _END:
            value = stack.pop()[0]
        else:  # an alias
            raise _Fallback
        # Counted as ``_Builder`` counts: each value once (the root too), keys not.
        if not stack:
            if count + 1 > max_nodes:
                raise _Fallback
            break
        parent = stack[-1]
        container = parent[0]
        if type(container) is list:
            container.append(value)
        elif parent[1] is _NO_KEY:
            if value in container:
                raise _Fallback  # a duplicate key
            parent[1] = value
            continue
        else:
            container[parent[1]] = value
            parent[1] = _NO_KEY
        count += 1
        if count > max_nodes:
            raise _Fallback
    get_event()  # DocumentEnd
    if not loader.check_event(yaml.StreamEndEvent):
        raise _Fallback  # another document
    return value


def _check_anchor(anchors: dict[str, yaml.Node], event: Any) -> None:
    if event.anchor in anchors:
        first = anchors[event.anchor].start_mark
        raise yaml.composer.ComposerError(
            None,
            None,
            f"found duplicate anchor {event.anchor!r} (first defined on line {first.line + 1})",
            event.start_mark,
        )


def _measure(root: yaml.Node, file: str | None, limits: Limits) -> None:
    """Refuse a document whose aliases expand past ``max_nodes``, ``max_expanded_bytes``
    or ``max_depth``, or refer to themselves, before anything is expanded.

    Every alias shares its anchor's node, so each distinct node is measured once
    (its expanded size, bytes and height are memoised): a "billion laughs" document costs
    as much as its text, not as much as its expansion.
    """
    measured: dict[int, tuple[int, int, int]] = {}  # id(node) -> (expanded size, bytes, height)
    open_nodes: set[int] = set()
    alias_hint = "YAML aliases expand to copies; use fewer or smaller anchors"

    def fail(message: str, node: yaml.Node, hint: str | None = None) -> TemplateLimitError:
        mark = node.start_mark
        return TemplateLimitError(message, location=Location(file, mark.line + 1, mark.column + 1), hint=hint)

    def visit(node: yaml.Node, depth: int) -> tuple[int, int, int]:
        known = measured.get(id(node))
        if known is None:
            if id(node) in open_nodes:
                raise fail("A YAML alias refers to the collection that contains it", node)
            if depth > limits.max_depth:
                raise fail(f"The document is nested more than {limits.max_depth} levels deep", node)
            size, height = 1, 0
            if isinstance(node, yaml.ScalarNode):
                size_bytes = len(node.value) + 2  # as a JSON string (quoted)
            else:
                open_nodes.add(id(node))
                children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
                size_bytes = 2 + len(children)  # brackets and separators
                for child in children:
                    child_size, child_bytes, child_height = visit(child, depth + 1)
                    size += child_size
                    size_bytes += child_bytes
                    height = max(height, child_height + 1)
                    if size > limits.max_nodes:
                        raise fail(f"The document expands to more than {limits.max_nodes} nodes", node, hint=alias_hint)
                    if size_bytes > limits.max_expanded_bytes:
                        raise fail(
                            f"The document expands to more than {limits.max_expanded_bytes} bytes with its "
                            "aliases written out (STOKER_MAX_TEMPLATE_EXPANDED_BYTES)",
                            node,
                            hint=alias_hint,
                        )
                open_nodes.discard(id(node))
            known = measured[id(node)] = (size, size_bytes, height)
        if depth + known[2] > limits.max_depth:
            raise fail(f"The document is nested more than {limits.max_depth} levels deep", node)
        return known

    visit(root, 0)


# What libyaml says when its own nesting limit fires (1000 levels; PyYAML wheels bundle a
# libyaml with this limit since 6.0.4). Its scanner reads a run of flow openers ahead
# before the parser hands out their events, so this can fire before ``_compose`` or
# ``_stream`` ever see a level past stoker's own limit.
_LIBYAML_NESTING_PROBLEM = "exceeded maximum nesting depth"


def is_parser_nesting_error(error: yaml.MarkedYAMLError) -> bool:
    """Whether ``error`` is the YAML library refusing nesting past its own limit."""
    return _LIBYAML_NESTING_PROBLEM in (error.problem or "")


def nesting_error(error: yaml.MarkedYAMLError, text: str, file: str | None, limits: Limits) -> TemplateLimitError:
    """stoker's own refusal of ``text``, which the YAML library refused as nested past
    its limit: the limit and its message stay stoker's, whatever the library's are.

    The text up to where the library stopped is read again: its nesting is within the
    library's limit, so the events come out and ``_compose`` stops at the first level
    past ``limits.max_depth``, with that level's place. Should the library's limit be the
    lower one, the refusal is placed where the library stopped.
    """
    mark = error.problem_mark
    assert mark is not None  # the scanner's errors are placed
    loader = _Loader(text[: mark.index])
    try:
        _compose(loader, file, limits)
    except TemplateLimitError as refusal:
        return refusal
    except yaml.YAMLError:
        pass  # the cut text ends mid-document: what matters is whether the limit fired first
    finally:
        loader.dispose()
    return TemplateLimitError(
        f"The document is nested more than {limits.max_depth} levels deep",
        location=Location(file, mark.line + 1, mark.column + 1),
    )


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


_STR_TAG = "tag:yaml.org,2002:str"
_COLLECTION_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})
# Tags whose constructor makes a plain value from the scalar alone; others (and any error)
# go through PyYAML's construct_object, which also knows the generator constructors.
_PLAIN_SCALAR_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"})
# Keys that make flatten_mapping change a mapping: ``<<`` (merge) and ``=`` (value).
_MERGE_TAG = "tag:yaml.org,2002:merge"
_FLATTENED_KEY_TAGS = frozenset({_MERGE_TAG, "tag:yaml.org,2002:value"})


def _child(path: str, step: object) -> str:
    """The path of a child, spelled as ``format_path`` spells it."""
    if isinstance(step, int):
        return f"{path}[{step}]"
    return f"{path}.{step}" if path else str(step)


class _Builder:
    """Turns a composed (and measured) node graph into plain data, and with a path given
    (``""`` for the root), into positions by path as well. Without one (None) no path is
    made: the loader builds that way and builds again with paths only when it has an
    error to report or a position to give.

    Node count and depth are checked again as data is built, as a second line of defence
    behind ``_measure``.
    """

    def __init__(self, loader: yaml.SafeLoader, file: str | None, limits: Limits):
        self.loader = loader
        self.file = file
        self.limits = limits
        self.count = 0
        self.positions: dict[str, tuple[int, int]] = {}
        self.constructors = loader.yaml_constructors
        # Keys written twice: with paths, a warning for each; without, only the fact.
        self.warnings: list[TemplateWarning] = []
        self.duplicated = False

    def _location(self, node: yaml.Node) -> Location:
        mark = node.start_mark
        return Location(self.file, mark.line + 1, mark.column + 1)

    def _fail(self, message: str, node: yaml.Node, path: str | None, hint: str | None = None) -> TemplateLimitError:
        return TemplateLimitError(message, path=path or None, location=self._location(node), hint=hint)

    def _unsupported_tag(self, node: yaml.Node, path: str | None) -> TemplateSyntaxError:
        return TemplateSyntaxError(
            f"Unsupported YAML tag {node.tag!r}: only plain YAML/JSON data is allowed",
            path=path or None,
            location=self._location(node),
        )

    def build(self, node: yaml.Node, path: str | None, depth: int) -> Any:
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
        if path is not None:
            self.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        kind = type(node)
        if kind is yaml.ScalarNode:
            return self._scalar(node, path)
        if node.tag not in _COLLECTION_TAGS:
            raise self._unsupported_tag(node, path)
        if kind is yaml.MappingNode:
            return self._mapping(node, path, depth)
        if path is None:
            return [self.build(item, None, depth + 1) for item in node.value]
        return [self.build(item, _child(path, index), depth + 1) for index, item in enumerate(node.value)]

    def _mapping(self, node: yaml.MappingNode, path: str | None, depth: int) -> dict[Any, Any]:
        # The mapping's own entries: flatten_mapping drops the ``<<`` keys.
        own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
        if any(key_node.tag in _FLATTENED_KEY_TAGS for key_node, _ in node.value):
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
        # duplicate; the last one wins, as in PyYAML's construct_mapping (Heat's reader).
        merged = len(node.value) - own
        result: dict[Any, Any] = {}
        seen: dict[Any, yaml.Node] = {}
        for index, (key_node, value_node) in enumerate(node.value):
            if type(key_node) is not yaml.ScalarNode:
                raise TemplateSyntaxError(
                    "A mapping key must be a string or another scalar, not a list or map",
                    path=path or None,
                    location=self._location(key_node),
                )
            key = self._scalar(key_node, path)
            child = None if path is None else _child(path, key)
            if index >= merged:
                if key in seen:
                    self.duplicated = True
                    if path is not None:
                        first_line = seen[key].start_mark.line + 1
                        self.warnings.append(_duplicate_warning(key, child, self._location(key_node), first_line))
                seen[key] = key_node
            result[key] = self.build(value_node, child, depth + 1)
        return result

    def _scalar(self, node: yaml.ScalarNode, path: str | None) -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        try:
            if tag in _PLAIN_SCALAR_TAGS:
                return self.constructors[tag](self.loader, node)
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as error:
            raise self._unsupported_tag(node, path) from error
        except (ValueError, KeyError, TypeError) as error:  # e.g. ``!!int abc``
            raise TemplateSyntaxError(
                f"Invalid value {node.value!r} for YAML tag {node.tag!r}",
                path=path or None,
                location=self._location(node),
            ) from error
