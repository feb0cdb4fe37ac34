"""The resource type reference: one HTML page per resource type, and an index of them
grouped by namespace with search as you type, made from the answers of the resource
type API (``GET /v1/{tenant}/resource_types`` and ``.../resource_types/{type}``, with
``.../template`` for the example), so a page says exactly what the API says.

``pages`` renders them (Jinja2, every value escaped); ``sources`` names what they are
read from (the ``stoker`` command's backend, or the API's own calls in the server);
``site`` writes them as a static site (``stoker docs build DIR``); ``routes`` serves
them in ``stoker serve`` under ``/dashboard/types/``.

What this package must not do: read the registry or the plugins itself (the schema is
the API's), or decide who may see a type (the caller's source does).
"""
