"""Stand-in for ``heat.common.i18n``: messages are used as written."""


def _(message: str) -> str:
    return message


def _LW(message: str) -> str:  # noqa: N802 - Heat's name
    return message


_LE = _LI = _LW
