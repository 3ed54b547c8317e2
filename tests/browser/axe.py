"""axe-core in the browser tests: inject the npm package's axe.min.js into a page and run it.

axe-core is pinned in tests/browser/package.json / package-lock.json and installed by
``make axe`` (``npm ci``, run by ``make test``) into tests/browser/node_modules/, which
is never committed. A missing file is a test failure, never a skip.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

AXE_JS = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
#: The impacts the acceptance criterion forbids.
BLOCKING = ("serious", "critical")
#: Desktop and phone viewports of the acceptance criterion.
WIDTHS = {"desktop": {"width": 1366, "height": 850}, "phone": {"width": 390, "height": 844}}


def axe_violations(page: Any, *, impacts: tuple[str, ...] = BLOCKING) -> list[dict[str, Any]]:
    """Violations of the given impacts on the page as it is now (WCAG 2.x A/AA and best-practice rules)."""
    if not AXE_JS.exists():
        pytest.fail(f"axe-core not installed at {AXE_JS}: run `make axe` (npm ci in tests/browser/).", pytrace=False)
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [v for v in result["violations"] if v.get("impact") in impacts]


def describe(violations: list[dict[str, Any]], where: str) -> list[str]:
    """One line per (rule, element): what the integrator needs to find and fix it."""
    lines = []
    for v in violations:
        for node in v["nodes"][:5]:
            target = " ".join(map(str, node.get("target", [])))
            lines.append(f"{where}: {v['id']} ({v['impact']}) at {target}: {node.get('failureSummary', '').splitlines()[-1:]}")
        if len(v["nodes"]) > 5:
            lines.append(f"{where}: {v['id']}: … {len(v['nodes']) - 5} more elements")
    return lines
