"""A real browser for the dashboard's tests: Debian's headless Chromium driven by
Playwright for Python (no browser download: Playwright launches ``/usr/bin/chromium``).

``chromium_path`` installs the ``chromium`` package with apt when it is missing
(``debian_packages``: as root, once per machine), and skips the test with the reason only
when apt itself is not there. ``Browser`` opens pages that record every script error and
failed console message, so a test fails on a page that broke even when what it looked for
showed; ``screenshot`` saves a page under ``test-artifacts/dashboard/`` (gitignored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import debian_packages

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# What a page may log without failing its test: the browser's own note of a 4xx/5xx answer
# (the dashboard shows those itself, and tests check what it shows).
ALLOWED_CONSOLE = ("Failed to load resource",)


def chromium_path() -> Path:
    """Debian's Chromium, installed first when missing (apt as root)."""
    if not CHROMIUM.exists():
        debian_packages.ensure(["chromium"], "the dashboard's browser tests")
    assert CHROMIUM.exists(), f"Debian's chromium package is installed, and {CHROMIUM} is not there"
    return CHROMIUM


@dataclass
class Watched:
    """A page and what went wrong on it."""

    page: Any
    errors: list[str] = field(default_factory=list)

    def check(self) -> None:
        assert not self.errors, "the page reported errors:\n" + "\n".join(self.errors)


class Browser:
    """One Chromium for a test module; a fresh context (no shared session) per page."""

    def __init__(self, executable: Path):
        from playwright.sync_api import sync_playwright

        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(
            executable_path=str(executable), args=["--no-sandbox"]
        )
        self.watched: list[Watched] = []

    def page(self, viewport: dict[str, int] = DESKTOP) -> Any:
        context = self.browser.new_context(viewport=viewport)
        context.set_default_timeout(30_000)
        page = context.new_page()
        watched = Watched(page)
        page.on("pageerror", lambda error: watched.errors.append(f"script error: {error}"))
        page.on(
            "console",
            lambda message: (
                message.type == "error"
                and not message.text.startswith(ALLOWED_CONSOLE)
                and watched.errors.append(f"console: {message.text}")
            ),
        )
        self.watched.append(watched)
        return page

    def check_pages(self) -> None:
        """Fail on any script error of the pages opened since the last check."""
        watched, self.watched = self.watched, []
        for item in watched:
            item.page.context.close()
        for item in watched:
            item.check()

    def close(self) -> None:
        self.browser.close()
        self.playwright.stop()


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
