"""SVG plots of a span/score study report: system scores with CIs, and errors per category as stacked bars.

Same conventions as :mod:`evaluators.reports.svg` (server-rendered, every data
string escaped, a ``<title>`` per mark with the unrounded number). The stacked
bars never rely on colour alone: each segment wide enough carries its
category's initial letters, every colour is named in a legend with the same
letters, and the Discourse branch is hatched as well as coloured.
"""
from __future__ import annotations

from html import escape
from typing import Sequence

from evaluators.reports import span_page
from evaluators.reports.svg import FONT, GRID, MUTED, _clip_label, _n, _text, _ticks, interval_chart

#: Colours for top-level categories (and ESA severities); Discourse always gets its own.
DISCOURSE_COLOUR = "#b0420a"
PALETTE = ("#2456c7", "#2f7d4f", "#7a4fb5", "#8a6d0b", "#3d7f91", "#a33a6b", "#5b6475", "#36507a")
SEVERITY_COLOURS = {"critical": "#7d1a14", "major": "#b3261e", "minor": "#95560f", "neutral": "#5b6475"}


def score_svg(report: dict) -> str:
    """System scores (MQM points or the 0–100 score) with their bootstrap 95% CIs, in ranking order."""
    systems = (report.get("ranking") or {}).get("systems") or []
    if not systems:
        return ""
    axis, lo, hi = span_page.score_axis(report)
    rows = [(s["system"] + (" (reference)" if s.get("is_reference") else ""), s.get("score"),
             *(s.get("score_ci") or [None, None])) for s in systems]
    kind = span_page.score_kind(report).upper()
    return interval_chart(rows, title=f"{kind} system scores with 95% bootstrap CI", axis_label=axis, lo=lo, hi=hi)


def _abbrev(name: str) -> str:
    """Two letters naming a category in the bars (``Discourse`` → ``Di``; ``Fluency`` → ``Fl``)."""
    letters = "".join(ch for ch in name if ch.isalnum())
    return (letters[:2] or "?").title()


def _colours(groups: Sequence[str], by_severity: bool) -> dict[str, str]:
    colours: dict[str, str] = {}
    others = iter(PALETTE * 4)
    for g in groups:
        if by_severity:
            colours[g] = SEVERITY_COLOURS.get(g, next(others))
        elif g.lower() == span_page.DISCOURSE.lower():
            colours[g] = DISCOURSE_COLOUR
        else:
            colours[g] = next(others)
    return colours


def _labels(groups: Sequence[str]) -> dict[str, str]:
    """Unique short labels: two letters, three when two groups share the first two."""
    labels: dict[str, str] = {}
    for g in groups:
        label = _abbrev(g)
        if label in labels.values():
            label = "".join(ch for ch in g if ch.isalnum())[:3].title() or label + "'"
        labels[g] = label
    return labels


def errors_svg(report: dict) -> str:
    """Errors per rating per system, stacked by top-level category (ESA: by severity)."""
    groups, shares = span_page.error_shares(report)
    if not groups or not shares:
        return ""
    by_severity = span_page.by_severity(report)
    colours, labels = _colours(groups, by_severity), _labels(groups)
    label_w, plot_w, right = 170.0, 430.0, 60.0
    row_h, top = 26.0, 34.0
    legend_rows = (len(groups) + 2) // 3
    plot_bottom = top + row_h * len(shares)
    height = plot_bottom + 44 + legend_rows * 20 + 8
    width = label_w + plot_w + right
    hi = max([sum(b.values()) for _, b in shares] + [0.0]) or 1.0
    ticks = _ticks(0.0, hi)
    hi = max(hi, ticks[-1]) if ticks else hi
    what = "severity" if by_severity else "top-level category"
    title = f"Errors per rated segment, by {what}"

    def x(v: float) -> float:
        return label_w + v / hi * plot_w

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'width="{_n(width)}" height="{_n(height)}" role="img" aria-label="{escape(title)}; the table above has '
        f'every count" font-family="{escape(FONT)}">',
        f"<title>{escape(title)}</title>",
        '<defs><pattern id="discourse-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="' + DISCOURSE_COLOUR + '"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#fff" stroke-opacity="0.45" stroke-width="2"/></pattern></defs>',
        _text(label_w, 18, title, weight="600", size=13),
    ]
    for t in ticks:
        parts.append(f'<line x1="{_n(x(t))}" y1="{_n(top - 4)}" x2="{_n(x(t))}" y2="{_n(plot_bottom)}" '
                     f'stroke="{GRID}" stroke-width="1"/>')
        parts.append(_text(x(t), plot_bottom + 16, f"{t:g}", anchor="middle", size=11, fill=MUTED))
    parts.append(_text(label_w + plot_w / 2, plot_bottom + 34, "errors per rated segment", anchor="middle",
                       size=12, fill=MUTED))
    for k, (system, bucket) in enumerate(shares):
        cy = top + row_h * k + row_h / 2
        parts.append(_text(label_w - 8, cy + 4, _clip_label(system, 24), anchor="end"))
        start = 0.0
        for g in groups:
            value = bucket.get(g, 0.0)
            if value <= 0:
                continue
            x0, x1 = x(start), x(start + value)
            discourse = not by_severity and g.lower() == span_page.DISCOURSE.lower()
            fill = "url(#discourse-hatch)" if discourse else colours[g]
            parts.append(f'<g class="error-bar" data-group="{escape(g)}"><title>{escape(f"{system}, {g}: {value!r} per segment")}</title>'
                         f'<rect x="{_n(x0)}" y="{_n(cy - 9)}" width="{_n(max(x1 - x0, 1.0))}" height="18" '
                         f'fill="{fill}" stroke="#fff" stroke-width="1"/>')
            if x1 - x0 >= 22:
                parts.append(_text((x0 + x1) / 2, cy + 4, labels[g], anchor="middle", size=11, fill="#fff",
                                   weight="600"))
            parts.append("</g>")
            start += value
        parts.append(_text(x(start) + 6, cy + 4, f"{start:.2f}", size=11, fill=MUTED))
    ly = plot_bottom + 52
    for k, g in enumerate(groups):
        lx = label_w + (k % 3) * 150.0
        yy = ly + (k // 3) * 20
        discourse = not by_severity and g.lower() == span_page.DISCOURSE.lower()
        fill = "url(#discourse-hatch)" if discourse else colours[g]
        parts.append(f'<rect x="{_n(lx)}" y="{_n(yy - 11)}" width="22" height="14" fill="{fill}"/>')
        parts.append(_text(lx + 11, yy, labels[g], anchor="middle", size=10, fill="#fff", weight="600"))
        parts.append(_text(lx + 28, yy, _clip_label(g, 18), size=11))
    parts.append("</svg>")
    return "".join(parts)
