"""Main-thread cost of marking error spans in a long document, in headless Chromium.

``make spansbench`` (or ``python -m pytest bench/spans_page.py -p tests.browser.conftest -q -s``): an MQM
document of 10 segments and 5 candidates; in each candidate a mouse selection over a few words, a category
typed in the popup and a severity key, then a keyboard selection extended over 40 characters one key at a time.
Printed per round: the long tasks (main-thread tasks over 50 ms, Long Tasks API) and the slowest event handler
(Event Timing: processing time of events taking 16 ms or more). Figures, not a test: a busy machine makes long
tasks of its own. The test suite checks the cause instead (tests/browser/test_spans_browser.py: a mark redraws its
own candidate's text only; extending a selection changes no text).
"""
from __future__ import annotations

import os
import statistics

import pytest

from tests.browser.test_spans_browser import drag_select, open_long_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROUNDS = int(os.environ.get("SPANSBENCH_ROUNDS", "5"))

LONG_TASKS = """() => { window.__longTasks = []; window.__events = [];
  new PerformanceObserver(list => { for (const e of list.getEntries()) window.__longTasks.push(e.duration); })
    .observe({type: 'longtask'});
  new PerformanceObserver(list => { for (const e of list.getEntries())
      window.__events.push(e.processingEnd - e.processingStart); })
    .observe({type: 'event', durationThreshold: 16}); }"""


def test_marking_in_a_ten_segment_five_candidate_document(live_server, chromium_browser):
    rows = []
    for k in range(ROUNDS):
        context, page = open_long_document(live_server, chromium_browser, f"perf-doc-{k}")
        try:
            page.evaluate(LONG_TASKS)
            for letter in "ABCDE":
                drag_select(page, f"#cand-{letter}-text", 0, 12)
                page.locator("[data-span-panel]").wait_for(state="visible")
                page.keyboard.type("pronoun")
                page.keyboard.press("Enter")
                page.keyboard.press("2")
            page.focus("#cand-C-text")
            for _ in range(40):
                page.keyboard.press("Shift+ArrowRight")
            page.keyboard.press("Escape")
            page.wait_for_timeout(300)
            assert page.locator("mark.sev-major").count() >= 5  # the marks were made: the figures mean something
            rows.append((page.evaluate("window.__longTasks"), max(page.evaluate("window.__events"), default=0.0)))
        finally:
            context.close()
    print(f"\nspans page, 10 segments x 5 candidates, {ROUNDS} rounds (load average {os.getloadavg()[0]:.1f})")
    print("round  long tasks (ms)          slowest event handler (ms)")
    for k, (tasks, slowest) in enumerate(rows, 1):
        print(f"{k:>5}  {', '.join(f'{t:.0f}' for t in tasks) or 'none':<24} {slowest:.1f}")
    print(f"rounds with a long task: {sum(1 for t, _ in rows if t)} of {ROUNDS}; "
          f"median slowest handler {statistics.median(s for _, s in rows):.1f} ms")
