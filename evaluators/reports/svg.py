"""Server-rendered SVG plots for the study report (no JavaScript, no plotting library).

Three plots, each a plain SVG string safe to insert with ``|safe``: every
piece of text from the data (system names, phenomena, annotator codes) goes
through :func:`html.escape`.  Each plot carries a ``<title>``/``aria-label``
and per-mark ``<title>`` tooltips with the unrounded number, and the page
always shows the same numbers in a table beside it.
"""
from __future__ import annotations

import math
from html import escape
from typing import Any, Sequence

# Colours from static/css/app.css (--accent, --bad, --muted, --border).
ACCENT = "#2456c7"
BAD = "#b3261e"
MUTED = "#5b6475"
GRID = "#d5d9e0"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"

#: Pairs of annotators sharing fewer items than this are hatched in the kappa heat map and
#: their kappa is not printed as if it were a value: on 1–9 items kappa swings from -1 to 1
#: (or is undefined) on a single answer.
KAPPA_MIN_SHARED = 10
HATCH = "#9aa1ad"


def _n(x: float) -> str:
    """A coordinate: short, locale-free."""
    return f"{x:.1f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _text(x: float, y: float, text: str, *, anchor: str = "start", size: int = 12, fill: str = "#1d2330",
          weight: str = "normal") -> str:
    return (f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
            f'font-weight="{weight}">{escape(text)}</text>')


def _clip_label(label: str, limit: int = 28) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _ticks(lo: float, hi: float) -> list[float]:
    span = hi - lo
    step = 0.1 if span <= 1.01 else 0.25 if span <= 2.01 else 10 ** math.floor(math.log10(span))
    if span / step < 3:  # e.g. a 0–100 scale: ticks every 20, not only at 0 and 100
        step /= 5
    first = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], first
    while t <= hi + 1e-9:
        ticks.append(round(t, 10))
        t += step
    if len(ticks) > 11:
        ticks = ticks[:: math.ceil(len(ticks) / 11)]
    return ticks


def interval_chart(
    rows: Sequence[tuple[str, float | None, float | None, float | None]],
    *,
    title: str,
    axis_label: str,
    lo: float,
    hi: float,
    reference_line: float | None = None,
    bars: bool = False,
) -> str:
    """Horizontal point (or bar) + CI whisker per row: ``(label, value, ci_low, ci_high)``.

    Rows with ``value`` None are listed with "undefined" instead of a mark.
    """
    label_w, plot_w, right = 190.0, 440.0, 70.0
    row_h, top, bottom = 26.0, 34.0, 44.0
    width = label_w + plot_w + right
    height = top + row_h * max(1, len(rows)) + bottom
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / span * plot_w

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'width="{_n(width)}" height="{_n(height)}" role="img" aria-label="{escape(title)}" font-family="{escape(FONT)}">',
        f"<title>{escape(title)}</title>",
        _text(label_w, 18, title, weight="600", size=13),
    ]
    plot_bottom = top + row_h * max(1, len(rows))
    for t in _ticks(lo, hi):
        parts.append(f'<line x1="{_n(x(t))}" y1="{_n(top - 4)}" x2="{_n(x(t))}" y2="{_n(plot_bottom)}" '
                     f'stroke="{GRID}" stroke-width="1"/>')
        parts.append(_text(x(t), plot_bottom + 16, f"{t:g}", anchor="middle", size=11, fill=MUTED))
    if reference_line is not None and lo <= reference_line <= hi:
        parts.append(f'<line x1="{_n(x(reference_line))}" y1="{_n(top - 4)}" x2="{_n(x(reference_line))}" '
                     f'y2="{_n(plot_bottom)}" stroke="{MUTED}" stroke-width="1.2" stroke-dasharray="4 3"/>')
    parts.append(_text(label_w + plot_w / 2, plot_bottom + 34, axis_label, anchor="middle", size=12, fill=MUTED))
    for k, (label, value, ci_low, ci_high) in enumerate(rows):
        cy = top + row_h * k + row_h / 2
        parts.append(_text(label_w - 8, cy + 4, _clip_label(str(label)), anchor="end"))
        if value is None:
            parts.append(_text(label_w + 6, cy + 4, "undefined", fill=MUTED, size=11))
            continue
        tip = f"{label}: {value!r}" + (f" (95% CI {ci_low!r} to {ci_high!r})" if ci_low is not None else "")
        parts.append("<g>")
        parts.append(f"<title>{escape(tip)}</title>")
        if bars:
            x0, x1 = sorted((x(max(lo, min(0.0, hi))), x(value)))
            parts.append(f'<rect x="{_n(x0)}" y="{_n(cy - 8)}" width="{_n(max(x1 - x0, 1))}" height="16" '
                         f'fill="{ACCENT}" fill-opacity="0.35"/>')
        if ci_low is not None and ci_high is not None:
            parts.append(f'<line x1="{_n(x(ci_low))}" y1="{_n(cy)}" x2="{_n(x(ci_high))}" y2="{_n(cy)}" '
                         f'stroke="{ACCENT}" stroke-width="2"/>')
            for end in (ci_low, ci_high):
                parts.append(f'<line x1="{_n(x(end))}" y1="{_n(cy - 6)}" x2="{_n(x(end))}" y2="{_n(cy + 6)}" '
                             f'stroke="{ACCENT}" stroke-width="2"/>')
        parts.append(f'<circle cx="{_n(x(value))}" cy="{_n(cy)}" r="5" fill="{ACCENT}"/>')
        parts.append("</g>")
        parts.append(_text(label_w + plot_w + 8, cy + 4, _num(value), size=11, fill=MUTED))
    parts.append("</svg>")
    return "".join(parts)


def ranking_svg(ranking: dict | None) -> str:
    """Expected wins per system with bootstrap 95% CI bars (Bojar et al. 2016)."""
    if not ranking or not ranking.get("systems"):
        return ""
    rows = [(s["system"], s.get("expected_wins"), *(s.get("expected_wins_ci") or [None, None]))
            for s in ranking["systems"]]
    return interval_chart(rows, title="Human ranking: expected wins with 95% bootstrap CI",
                          axis_label="expected wins (share of decisive comparisons won)", lo=0.0, hi=1.0,
                          reference_line=0.5)


def phenomenon_svg(by_phenomenon: dict, *, coefficient: str = "gwet_ac1", name: str = "AC1") -> str:
    """Agreement (AC1 by default) per phenomenon, bars with 95% CI whiskers."""
    if not by_phenomenon:
        return ""
    rows = []
    for phen, block in by_phenomenon.items():
        c = block.get("coefficients", {}).get(coefficient, {})
        rows.append((phen, c.get("value"), c.get("ci_low"), c.get("ci_high")))
    if all(r[1] is None for r in rows):  # nothing to plot: no chart of "undefined" rows (phenomenon_chart_note)
        return ""
    lows = [v for r in rows for v in (r[1], r[2]) if v is not None]
    lo = -1.0 if lows and min(lows) < -0.5 else -0.5 if lows and min(lows) < 0 else 0.0
    return interval_chart(rows, title=f"Gwet's {name} per phenomenon, with 95% CI", axis_label=name,
                          lo=lo, hi=1.0, reference_line=0.0 if lo < 0 else None, bars=True)


def phenomenon_chart_note(by_phenomenon: dict, *, coefficient: str = "gwet_ac1", name: str = "AC1") -> str:
    """Why there is no per-phenomenon chart when there are phenomena but no value to plot ('' otherwise)."""
    blocks = [b.get("coefficients", {}).get(coefficient, {}) for b in by_phenomenon.values()]
    if not blocks or any(c.get("value") is not None for c in blocks):
        return ""
    # the statistics core's notes, without its hint to callers of agreement() ("pass the full category list …")
    reasons = list(dict.fromkeys(str(c["note"]).split("; pass ")[0] for c in blocks if c.get("note")))
    why = f": {'; '.join(reasons)}" if reasons else ""
    return f"No {name} chart: {name} is undefined for every phenomenon{why}."


def _kappa_colour(value: float | None) -> str:
    """Diverging scale: red below 0, white at 0, blue towards 1; grey when undefined."""
    if value is None:
        return "#eceef2"
    v = max(-1.0, min(1.0, value))
    base = (0x24, 0x56, 0xC7) if v >= 0 else (0xB3, 0x26, 0x1E)
    a = abs(v)
    r, g, b = (round(255 + (c - 255) * a) for c in base)
    return f"#{r:02x}{g:02x}{b:02x}"


def kappa_few_items(pair: dict | None, min_shared: int = KAPPA_MIN_SHARED) -> bool:
    """Whether a pair shares too few items for its kappa to be read as a value."""
    return pair is None or int(pair.get("n") or 0) < min_shared


def kappa_heatmap_svg(pairs: Sequence[dict], *, min_shared: int = KAPPA_MIN_SHARED) -> str:
    """The rater × rater matrix of pairwise Cohen's kappa as a heat map (symmetric, diagonal blank).

    Each cell shows kappa and, below it, n (the items the pair shares); pairs with n under
    ``min_shared`` are hatched grey and show only their n, never a kappa.
    """
    if not pairs:
        return ""
    raters = sorted({p["rater_a"] for p in pairs} | {p["rater_b"] for p in pairs})
    value: dict[tuple[str, str], dict[str, Any]] = {}
    for p in pairs:
        value[(p["rater_a"], p["rater_b"])] = value[(p["rater_b"], p["rater_a"])] = p
    n = len(raters)
    cell = max(14.0, min(56.0, 560.0 / n))
    show_numbers = cell >= 34
    label_w, top = 110.0, 100.0
    legend_w = 210.0
    width = label_w + cell * n + legend_w
    height = max(top + cell * n + 20, top + 11 * 14 + 80)
    title = "Cohen's kappa per pair of annotators"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {_n(width)} {_n(height)}" '
        f'width="{_n(width)}" height="{_n(height)}" role="img" aria-label="{escape(title)}; pairs sharing fewer '
        f'than {min_shared} items are hatched" font-family="{escape(FONT)}">',
        f"<title>{escape(title)}</title>",
        '<defs><pattern id="kappa-few" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f3f4f6"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{HATCH}" stroke-width="2"/></pattern></defs>',
        _text(label_w, 18, title, weight="600", size=13),
    ]
    font = 11 if cell >= 20 else 8
    for i, r in enumerate(raters):
        cy = top + cell * i + cell / 2
        parts.append(_text(label_w - 6, cy + 4, _clip_label(r, 14), anchor="end", size=font))
        cx = label_w + cell * i + cell / 2
        parts.append(f'<text x="{_n(cx)}" y="{_n(top - 6)}" font-size="{font}" fill="#1d2330" '
                     f'transform="rotate(-45 {_n(cx)} {_n(top - 6)})">{escape(_clip_label(r, 14))}</text>')
    for i, a in enumerate(raters):
        for j, b in enumerate(raters):
            x0, y0 = label_w + cell * j, top + cell * i
            if i == j:
                parts.append(f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(cell)}" height="{_n(cell)}" fill="#fff" '
                             f'stroke="{GRID}"/>')
                continue
            pair = value.get((a, b))
            shared = int(pair.get("n") or 0) if pair else 0
            few = kappa_few_items(pair, min_shared)
            v = None if few else (pair or {}).get("value")
            if few:
                tip = f"{a} × {b}: {shared} shared unit{'s' if shared != 1 else ''}, fewer than {min_shared}: no kappa shown"
            else:
                tip = f"{a} × {b}: " + ("undefined" if v is None else repr(v)) + f" on {shared} units"
            if pair and pair.get("note"):
                tip += f" ({pair['note']})"
            fill = "url(#kappa-few)" if few else _kappa_colour(v)
            parts.append(f'<g class="kappa-cell{" few" if few else ""}" data-n="{shared}"><title>{escape(tip)}</title>'
                         f'<rect x="{_n(x0)}" y="{_n(y0)}" width="{_n(cell)}" height="{_n(cell)}" fill="{fill}" '
                         'stroke="#fff"/>')
            if show_numbers:
                dark = v is not None and abs(v) > 0.55
                ink, small_ink = ("#fff", "#fff") if dark else ("#1d2330", "#1d2330")
                if few:
                    parts.append(_text(x0 + cell / 2, y0 + cell / 2 + 4, f"n={shared}", anchor="middle", size=10,
                                       fill="#1d2330"))
                else:
                    parts.append(_text(x0 + cell / 2, y0 + cell / 2, _num(v, 2), anchor="middle", size=11, fill=ink))
                    parts.append(_text(x0 + cell / 2, y0 + cell / 2 + 13, f"n={shared}", anchor="middle", size=9,
                                       fill=small_ink))
            parts.append("</g>")
    # legend
    lx, ly = label_w + cell * n + 24, top
    for k in range(11):
        v = 1 - k * 0.2
        parts.append(f'<rect x="{_n(lx)}" y="{_n(ly + k * 14)}" width="16" height="14" fill="{_kappa_colour(v)}"/>')
        if k % 5 == 0:
            parts.append(_text(lx + 22, ly + k * 14 + 11, f"{v:g}", size=11, fill=MUTED))
    parts.append(_text(lx, ly + 11 * 14 + 16, "kappa (n = shared units)", size=11, fill=MUTED))
    hy = ly + 11 * 14 + 30
    parts.append(f'<rect x="{_n(lx)}" y="{_n(hy)}" width="16" height="14" fill="url(#kappa-few)" stroke="{GRID}"/>')
    parts.append(_text(lx + 22, hy + 11, f"n < {min_shared}: too few", size=11, fill=MUTED))
    parts.append(_text(lx + 22, hy + 25, "shared units, no kappa", size=11, fill=MUTED))
    parts.append("</svg>")
    return "".join(parts)
