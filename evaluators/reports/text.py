"""Readable plain-text rendering of agreement results and study reports.

The JSON is the contract; this is for a researcher reading a terminal, so
values are rounded here (and only here) to four decimals.
"""
from __future__ import annotations

from typing import Any

from protocols.registry import UnknownProtocol, protocol_named


def _per_candidate(report: dict) -> bool:
    """The report is a span/score protocol's (MQM, ESA, DA): its controls and ranking are its own."""
    try:
        return protocol_named(str(report.get("protocol"))).per_candidate_annotations
    except UnknownProtocol:
        return False

#: Display names, in the order the seeds report them (AC1 first).
COEFFICIENT_NAMES: dict[str, str] = {
    "gwet_ac1": "Gwet's AC1",
    "cohen_kappa": "Cohen's kappa",
    "fleiss_kappa": "Fleiss' kappa",
    "conger_kappa": "Conger's kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "brennan_prediger": "Brennan-Prediger",
    "percent_agreement": "Percent agreement",
}


def coefficient_name(key: str, weights: str = "identity") -> str:
    if key == "gwet_ac1" and weights not in ("identity", None):
        return "Gwet's AC2"
    return COEFFICIENT_NAMES.get(key, key)


def fmt(value: Any, digits: int = 4) -> str:
    """A number rounded for display; ``None`` shows as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        if value != 0 and abs(value) < 10 ** -digits:
            return f"{value:.2e}"
        return f"{value:.{digits}f}"
    return str(value)


def _ci(pair: list | None) -> str:
    if not pair or pair[0] is None:
        return "—"
    return f"{fmt(pair[0])} .. {fmt(pair[1])}"


def _agreement_lines(block: dict, indent: str = "") -> list[str]:
    weights = block.get("weights", "identity")
    lines = [
        f"{indent}items {block.get('n_items')}, raters {block.get('n_raters')}, ratings {block.get('n_ratings')}; "
        f"categories: {', '.join(map(str, block.get('categories', [])))}; weights: {weights}",
        f"{indent}{'coefficient':<22}{'value':>9}{'SE':>9}{'95% CI':>19}{'p':>11}",
    ]
    coefs = block.get("coefficients", {})
    for key in COEFFICIENT_NAMES:
        if key not in coefs:
            continue
        c = coefs[key]
        ci = f"{fmt(c.get('ci_low'))} .. {fmt(c.get('ci_high'))}" if c.get("ci_low") is not None else "—"
        line = f"{indent}{coefficient_name(key, weights):<22}{fmt(c.get('value')):>9}{fmt(c.get('se')):>9}{ci:>19}{fmt(c.get('p_value')):>11}"
        if c.get("note"):
            line += f"  ({c['note']})"
        lines.append(line)
    return lines


def agreement_text(block: dict) -> str:
    """The agreement JSON as a small table, plus pairwise Cohen's kappas."""
    lines = _agreement_lines(block)
    pairs = block.get("pairwise_cohen_kappa") or []
    if pairs:
        lines.append("pairwise Cohen's kappa:")
        for p in pairs:
            note = f"  ({p['note']})" if p.get("note") else ""
            lines.append(f"  {p['rater_a']} × {p['rater_b']}: {fmt(p.get('value'))} on {p.get('n')} items{note}")
    return "\n".join(lines) + "\n"


def study_report_text(report: dict) -> str:
    """A study report (see :mod:`evaluators.reports.study_stats`) as readable text."""
    out: list[str] = []
    out.append(f"Study {report['study']} ({report['protocol']}); unit: {report['unit']}")
    pol = report.get("policies", {})
    out.append(
        "policies: ties={ties}, spam={spam}, excluded={excluded}, pilot={pilot}, invalid={invalid}".format(
            ties=pol.get("ties"), spam=pol.get("spam"), excluded=pol.get("excluded"), pilot=pol.get("pilot", "drop"),
            invalid=pol.get("invalid")
        )
    )
    dropped = pol.get("dropped") or {}
    if dropped:
        out.append("dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items()))
    out.extend(_facts_lines(report.get("facts") or {}))
    out.append("")
    out.append("Agreement (" + ("ties kept" if pol.get("ties") == "keep" else "ties dropped") + ")")
    out.extend(_agreement_lines(report))
    other_key = "without_ties" if "without_ties" in report else "with_ties"
    other = report.get(other_key)
    if other:
        out.append("")
        out.append("Agreement (" + other_key.replace("_", " ") + ")")
        out.extend(_agreement_lines(other))
    pairs = report.get("pairwise_cohen_kappa") or []
    if pairs:
        out.append("")
        out.append("Pairwise Cohen's kappa")
        for p in pairs:
            out.append(f"  {p['rater_a']} × {p['rater_b']}: {fmt(p.get('value'))} on {p.get('n')} items")
    by_ph = report.get("by_phenomenon") or {}
    if by_ph:
        out.append("")
        out.append(f"{'phenomenon':<24}{'AC1':>9}{'#ref':>7}{'#sys':>7}{'#tie':>7}{'#invalid':>10}")
        for name, block in by_ph.items():
            ac1 = block.get("coefficients", {}).get("gwet_ac1", {}).get("value")
            out.append(
                f"{name:<24}{fmt(ac1):>9}{block.get('n_reference_won', 0):>7}{block.get('n_system_won', 0):>7}"
                f"{block.get('n_tie', 0):>7}{block.get('n_invalid', 0):>10}"
            )
    control = report.get("control")
    out.append("")
    if _per_candidate(report):
        pass  # control items of span protocols are reported by `quality`
    elif control:
        out.append(
            f"Control: the hidden reference won {control.get('n_reference_won')} of {control.get('n_judgments')} "
            f"judgments ({fmt(control.get('share'))})"
        )
    else:
        out.append("Control: no hidden reference in this study")
    ranking = report.get("ranking") or {}
    systems = ranking.get("systems") or []
    if _per_candidate(report):
        out.extend(_score_ranking_lines(report))
    elif systems:
        out.append("")
        out.append(f"Human ranking of the systems ({ranking.get('n_items')} items, {ranking.get('n_boot')} bootstrap "
                   f"resamples, seed {ranking.get('seed')})")
        out.append(f"  {'pos.':<6}{'system':<20}{'wins':>6}{'ties':>6}{'losses':>7}{'expected wins':>15}"
                   f"{'95% CI':>19}{'Bradley-Terry':>15}{'95% CI':>19}")
        for s in systems:
            ew_ci, bt_ci = s.get("expected_wins_ci") or [None, None], s.get("bt_ci") or [None, None]
            out.append(
                f"  {s.get('position', s.get('rank'))!s:<6}{str(s.get('system')):<20}{s.get('wins'):>6}{s.get('ties'):>6}{s.get('losses'):>7}"
                f"{fmt(s.get('expected_wins')):>15}{_ci(ew_ci):>19}{fmt(s.get('bt')):>15}{_ci(bt_ci):>19}"
            )
        sign = ranking.get("sign_test")
        if sign:
            out.append(f"  sign test {sign.get('system_a')} vs {sign.get('system_b')}: {sign.get('wins_a')} : "
                       f"{sign.get('wins_b')} (ties {sign.get('ties')}), two-sided p = {fmt(sign.get('p_value'))}")
    for note in report.get("notes", []):
        out.append(f"note: {note}")
    return "\n".join(out) + "\n"


def _score_ranking_lines(report: dict) -> list[str]:
    """MQM / ESA / DA: the WMT-style ranking table, the errors per category and the score agreement."""
    ranking = report.get("ranking") or {}
    systems = ranking.get("systems") or []
    out: list[str] = []
    if systems:
        score = ranking.get("score", {})
        unit = protocol_named(str(report["protocol"])).score_unit_words()
        out += ["", f"Human ranking ({ranking.get('method')}; score: {score.get('name')}, {unit})",
                f"  {'cluster':<9}{'rank':<9}{'system':<22}{'score':>9}{'95% CI':>21}{'z':>9}{'items':>7}"]
        for s in systems:
            rr = s.get("rank_range") or [None, None]
            rank = f"{rr[0]}-{rr[1]}" if rr[0] != rr[1] else str(rr[0])
            out.append(f"  {s.get('cluster')!s:<9}{rank:<9}{str(s.get('system')):<22}{fmt(s.get('score')):>9}"
                       f"{_ci(s.get('score_ci')):>21}{fmt(s.get('z')):>9}{s.get('n_items')!s:>7}")
    errors = (report.get("errors") or {}).get("rows") or []
    if errors:
        totals: dict[str, int] = {}
        for row in errors:
            totals[str(row["category"])] = totals.get(str(row["category"]), 0) + int(row["count"])
        out += ["", "Errors per category (all systems): " + ", ".join(
            f"{name} {count}" for name, count in sorted(totals.items(), key=lambda kv: -kv[1]))]
    scores = (report.get("span_agreement") or {}).get("scores") or {}
    alpha = (scores.get("krippendorff_alpha_interval") or {}).get("value")
    if scores:
        out += ["", f"Score agreement: Krippendorff's alpha (interval) {fmt(alpha)} over {scores.get('n_units')} "
                    f"segments, {scores.get('n_raters')} raters"]
    return out


def _spread(block: dict | None) -> str:
    if block is None:
        return "none judged"
    return f"{block['min']}/{block['median']}/{block['max']}"


def _facts_lines(facts: dict) -> list[str]:
    """How the judgments were collected and the raters per unit (the report's ``facts``; null = not recorded)."""
    if not facts:
        return []
    collection = facts.get("collection") or {}
    how = collection.get("how")
    if how == "imported":
        origin = (f"imported from {collection.get('file')} (format {collection.get('format')}"
                  + (f"; source: {collection['source']}" if collection.get("source") else "; source not recorded")
                  + ")")
    elif how == "file":
        origin = f"read from {collection.get('file')}"
    else:
        origin = "collected with this tool"
    recorded = facts.get("recorded") or {}

    def said(value: Any) -> str:
        return "not recorded" if value is None else str(value).lower()
    timing = recorded.get("timing")
    times = "not recorded" if timing is None else f"{timing['n_timed']} of {timing['n_judgments']} judgments"
    return [f"judgments: {origin}",
            f"raters min/median/max: per segment {_spread(facts.get('raters_per_segment'))}, per item "
            f"{_spread(facts.get('raters_per_item'))}, per document {_spread(facts.get('raters_per_document'))}",
            f"recorded: system names hidden {said(recorded.get('blinding'))}, candidate order randomised "
            f"{said(recorded.get('order_randomised'))}, answer times {times}"]


def exclusion_clause(n_excluded: int, excluded_policy: str | None) -> str:
    """The methods paragraph's closing clause on excluded annotators (every protocol's paragraph ends QC with it)."""
    if n_excluded == 0:
        return "; no annotator was excluded."
    return (f"; {n_excluded} annotator{'s were' if n_excluded != 1 else ' was'} excluded"
            + (" and their judgments left out of the analysis." if excluded_policy == "drop"
               else ", their judgments kept in the analysis."))
