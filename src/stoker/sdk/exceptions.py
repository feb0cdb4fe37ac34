"""Errors a plugin author raises or sees.

Hierarchy (everything derives from StokerError, which carries an optional template
path such as ``resources.web.properties.flavor`` and a hint for the fix):

    StokerError
      ValidationError                 a template, environment or property is invalid
        PropertyError                 one property value is wrong (names its path)
        PropertyErrors                several at once (every properties group broken)
        SchemaError                   a plugin's own schema is wrong (found at registration)
      ResourceFailure                 a lifecycle handler failed
      UpdateReplace                   raised by handle_update: replace the resource instead
      UpdateInProgressError           an in-place update is not possible right now
      ResourceNotFoundError           a named resource does not exist
      InvalidTemplateAttribute        an attribute a template asked for does not exist
      EntityNotFound                  a client lookup found nothing (ignored on delete)
      ClientPluginError               a client plugin is unknown or cannot agree a version
        UnknownClientPluginError      no client plugin of that name is registered
        MicroversionUnavailableError  the cloud does not offer the version a feature needs

Nothing here does I/O; the engine decides how an error becomes a state and an event.
"""

from __future__ import annotations

__all__ = ["ClientPluginError", "EntityNotFound", "InvalidTemplateAttribute", "MicroversionUnavailableError", "PropertyError", "PropertyErrors", "ResourceFailure", "ResourceNotFoundError", "SchemaError", "StokerError", "UnknownClientPluginError", "UpdateInProgressError", "UpdateReplace", "ValidationError"]


class StokerError(Exception):
    """Base of every error stoker raises on purpose.

    ``verbatim``: the message is Heat's own text, word for word, which Heat's clients and
    tests match exactly; the API sends it without the place (path, file position), which
    stays on the error for stoker's own output."""

    verbatim = False

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        if self.hint:
            text = f"{text} ({self.hint})"
        return text


class ValidationError(StokerError):
    """Something the user wrote is invalid; the message names where."""


class PropertyError(ValidationError):
    """A property value does not match its schema."""


class PropertyErrors(ValidationError):
    """Several property values are wrong, each a PropertyError with its own path in
    ``errors`` (``Resource.validate`` reports every properties group broken, seed 002)."""

    def __init__(self, errors: list[PropertyError]):
        self.errors = list(errors)
        super().__init__("; ".join(str(error) for error in self.errors))


class SchemaError(ValidationError):
    """A plugin declares an impossible schema; reported when the plugin registers."""


class ResourceFailure(StokerError):
    """A lifecycle handler raised; wraps the original exception."""

    def __init__(self, message: str, *, path: str | None = None, cause: BaseException | None = None):
        super().__init__(message, path=path)
        self.cause = cause


class UpdateReplace(StokerError):
    """Raised from ``handle_update`` to ask the engine for a replacement."""

    def __init__(self, resource_name: str = "", message: str | None = None):
        super().__init__(message or f"The Resource {resource_name} requires replacement.")
        self.resource_name = resource_name


class UpdateInProgressError(StokerError):
    """An in-place update cannot be done now."""


class ResourceNotFoundError(StokerError):
    """A resource named in a template or request does not exist."""


class InvalidTemplateAttribute(StokerError):
    """A template asked for an attribute the resource type does not have.

    ``InvalidTemplateAttribute(resource, key)``, or Heat's keywords ``resource=``,
    ``key=``; or the attribute's name alone, as the plugin guide's ``_resolve_attribute``
    raises it (``InvalidTemplateAttribute(name)``): the engine then names the resource
    (``for_resource``)."""

    def __init__(self, resource: str | None = None, key: str | None = None):
        if key is None:
            resource, key = None, resource
        self.resource = resource
        self.key = key
        super().__init__(self._text())

    def _text(self) -> str:
        named = f"{self.resource} {self.key}" if self.resource is not None else f"{self.key}"
        return f"The Referenced Attribute ({named}) is incorrect."

    def for_resource(self, name: str) -> InvalidTemplateAttribute:
        """This error naming resource ``name`` when the plugin named none."""
        if self.resource is None:
            self.resource = name
            self.message = self._text()
            self.args = (self.message,)
        return self


class EntityNotFound(StokerError):
    """A client plugin could not find an entity."""

    def __init__(self, entity: str = "Entity", name: str = ""):
        super().__init__(f"The {entity} ({name}) could not be found.")
        self.entity = entity
        self.name = name


class ClientPluginError(StokerError):
    """A client plugin cannot serve a request: unknown, misconfigured, or no version in
    common with the service."""


class UnknownClientPluginError(ClientPluginError):
    """No client plugin is registered under the name a resource asked for."""

    def __init__(self, name: str | None, known: list[str]):
        from difflib import get_close_matches

        if not name:
            super().__init__("No client plugin was named, and the resource type sets no default_client_name")
        else:
            close = get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else None
            super().__init__(f"No client plugin named {name!r} is registered", hint=hint)
        self.name = name


class MicroversionUnavailableError(ClientPluginError):
    """A feature needs a (micro)version newer than the one in use for a service."""

    def __init__(self, message: str, *, service: str, required: str, available: str | None):
        super().__init__(message)
        self.service = service
        self.required = required
        self.available = available
