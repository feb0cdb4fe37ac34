"""The reference served by ``stoker serve``: ``/dashboard/types/`` (the index) and
``/dashboard/types/{type_name}`` (a type's page), with the assets at
``/dashboard/types/_static/{name}``.

The pages are made from the same calls as the API's answers: the app declares the
routes (``api.catalog.OPERATIONS``, with their rules) and makes an endpoint of each page
function that authenticates and authorises the request as every API route is
(``api.call``), and hands the page the API's reads for the caller (a ``TypeSource``).
The assets (CSS and script, the same for everyone) need no token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from stoker.typedocs import pages
from stoker.typedocs.sources import TypeSource

INDEX_PATH = "/dashboard/types/"
TYPE_PATH = "/dashboard/types/{type_name}"
ASSET_PATH = "/dashboard/types/" + pages.ASSETS_DIRECTORY + "/{name}"

# A page: the caller's reads and the request's path parameters -> the page's HTML.
Page = Callable[[TypeSource, Mapping[str, str]], str]
_MEDIA_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


def index(source: TypeSource, path: Mapping[str, str]) -> str:
    return pages.index_page(source.resource_types(with_description=True), pages.SERVED_LINKS)


def type_page(source: TypeSource, path: Mapping[str, str]) -> str:
    type_name = path["type_name"]
    schema = source.resource_type(type_name)
    return pages.type_page(
        schema, source.resource_type_template(type_name, "hot"), pages.SERVED_LINKS
    )


async def asset(request: Request) -> Response:
    name = request.path_params["name"]
    try:
        content = pages.asset(name)
    except KeyError:
        return PlainTextResponse(f"No such file: {name}", status_code=404)
    return Response(
        content,
        media_type=_MEDIA_TYPES[name[name.rfind(".") :]],
        headers={"Cache-Control": "max-age=3600"},
    )
