"""Headless Chromium for browser tests (Debian's /usr/bin/chromium driven by playwright's sync API).

Under CI=true a missing browser is a failure, never a skip.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# playwright's sync API keeps an event loop in the test thread; the ORM calls
# the tests make between page actions are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator:
    if not os.path.exists(CHROMIUM):
        message = (f"Chromium not found at {CHROMIUM}: install Debian's 'chromium' package "
                   "(make browser) or point CHROMIUM at a Chromium binary.")
        if os.environ.get("CI") == "true":
            pytest.fail(message + " Browser tests are required under CI=true.", pytrace=False)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(chromium_browser) -> Iterator:
    """A fresh desktop-sized page (1280×900) in its own context."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(exist_ok=True)
    return SCREENSHOTS
