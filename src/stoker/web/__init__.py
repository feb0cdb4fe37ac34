"""The web dashboard that ``stoker serve`` serves under ``/dashboard/`` (docs/dashboard.md).

What it owns: the pages (``pages``: each an HTML shell with the navigation, rendered on
the server), their static assets (``static/``: the stylesheet and the small client that
fills the pages, shipped inside the package, nothing fetched from another origin), and
the session check the sign-in page asks (``session``: who a token is, by the server's
own authenticator).

What it must not do: read or change stacks itself. Every page's data comes from the
Orchestration API the CLI calls, with the user's token, so the API's authentication and
policy apply to the dashboard exactly as to any client.
"""
