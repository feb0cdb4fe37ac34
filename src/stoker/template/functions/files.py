"""get_file: the content of a file sent with the template.

The content comes only from the template's ``files`` map (what the client uploads with
the template); this module must never read the engine's filesystem, whatever the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, Parser, ResolutionContext, resolve

_HINT = "get_file reads the files sent with the template (the client uploads each path the template names), never the engine's disk"


class GetFile(Function):
    """``{get_file: path}``: the content stored under ``path`` in the template's files."""

    __slots__ = ("files",)
    description = "A function for including a file inline."

    def __init__(self, fn_name: str, args: Any, path: tuple, files: Mapping[str, str] | None = None):
        self.files: Mapping[str, str] = files or {}
        super().__init__(fn_name, args, path)

    @classmethod
    def from_template(cls, fn_name: str, raw_args: Any, path: tuple, parser: Parser) -> Function:
        return cls(fn_name, parser.parse(raw_args, path + (fn_name,)), path, parser.files)

    def check(self) -> None:
        if isinstance(self.args, Function):
            return
        if not isinstance(self.args, str):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')
        self._content(self.args)

    def _content(self, key: str) -> str:
        content = self.files.get(key)
        if content is None:
            raise self.error(f'No content found in the "files" section for {self.fn_name} path: {key}', hint=_HINT)
        if not isinstance(content, str):
            raise self.error(f'The content of "{key}" in the "files" section is not text')
        return content

    def result(self, context: ResolutionContext) -> Any:
        key = resolve(self.args, context)
        if key is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(key, str):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')
        return self._content(key)
