"""The paper outputs of a span/score study (MQM, ESA, DA): the methods paragraph and the WMT-style tables.

Called from :mod:`evaluators.reports.paper` when the report is a span report, so
``agreement SLUG --methods``, ``--table ranking|agreement`` and the page's
downloads keep one entry point. Every figure comes from the report dict; the
study's design (taxonomy, severities, QC, how the judgments were collected) from
its ``facts`` block (evaluators/reports/facts.py), and only what that records.

The ranking table is WMT's: cluster, rank range, system, score, 95% CI, z, with
a ``\\midrule`` between clusters in LaTeX (the convention of the WMT findings
papers' human-ranking tables).
"""
from __future__ import annotations

from statistics import mean
from typing import Any

from evaluators.reports import facts as fx
from evaluators.reports import span_page
from evaluators.reports.text import exclusion_clause
from protocols.registry import protocol_named

CITATIONS = {
    "mqm": "Freitag et al., 2021",
    "esa": "Kocmi et al., 2024",
    "da": "Graham et al., 2013",
    "wmt": "Kocmi et al., 2023",
    "appraise": "Federmann, 2018",
}
DISCOURSE_NOTE = "a Discourse branch"


def _f(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(block: dict | None, digits: int = 3) -> str:
    if not block or block.get("ci_low") is None or block.get("ci_high") is None:
        return ""
    return f", 95% CI [{_f(block['ci_low'], digits)}, {_f(block['ci_high'], digits)}]"


def listing(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


# ---------------------------------------------------------------- methods paragraph
def _protocol_sentence(kind: str, facts: dict, report: dict) -> str:
    """What annotators did and how a segment's score is made: the protocol's ``methods_protocol_sentence``."""
    return protocol_named(str(report["protocol"])).methods_protocol_sentence(kind, facts, report)


def severity_words(facts: dict) -> str:
    """``a severity (minor, major and critical)``, naming the file's severities for an imported study."""
    categories = facts.get("categories") or {}
    from_file = categories.get("from") == "imported file"
    severities = list(categories.get("severities") or [])
    return (f"a severity ({listing(severities)}{', the severities used in the file' if from_file else ''})"
            if severities else "a severity")


def _design_sentence(report: dict, facts: dict) -> str:
    shown = fx.display_clauses(facts)
    if fx.how(facts) == "native":
        shown.insert(0, "whole documents, their segments one below the other with the source beside each"
                     if facts.get("unit") == "document" else "sentences shown in their document context")
    n_judgments = int((report.get("policies") or {}).get("n_judgments_in", 0))
    return " ".join(p for p in [
        "The unit was the segment" + (f": {'; '.join(shown)}." if shown else "."),
        fx.not_recorded_sentence(facts),
        f"The study had {fx.systems_clause(facts)}; {fx.raters_clause(facts, n_judgments, segments=True)} and "
        f"{report.get('n_ratings', 0)} segment ratings (one per item, candidate and annotator)."] if p)


def _qc_sentence(kind: str, report: dict, facts: dict) -> str:
    qc = [fx.timing_clause(facts), *fx.control_clauses(facts)]
    controls = (facts.get("recorded") or {}).get("controls") or {}
    uses_spans = bool((report.get("policies") or {}).get("uses_spans", True))
    if (protocol_named(str(report["protocol"])).tests_score_drop(uses_spans) and controls.get("kind") == "injected_error"
            and qc[1:]):
        qc[1] += ("; the scores of the degraded copies against their originals were compared with a one-sided "
                  "Mann–Whitney U test")
    control = report.get("control") or {}
    if control.get("n_checks"):
        qc.append(f"annotators missed {control['n_missed']} of the {control['n_checks']} injected errors "
                  f"({control['miss_rate']:.1%})")
        drop = control.get("score_drop") or {}
        if drop.get("p") is not None:
            qc.append(f"a one-sided Mann–Whitney U test of whether the degraded copies scored lower than their "
                      f"originals gave p = {_f(drop['p'])} ({drop.get('n_pairs')} pairs)")
    policies = report.get("policies") or {}
    excluded = exclusion_clause(int(facts.get("n_excluded") or 0), policies.get("excluded"))
    return "For quality control, " + "; ".join(qc) + excluded


def _agreement_sentence(kind: str, report: dict) -> str:
    coefs = report.get("coefficients") or {}
    ac1, alpha = coefs.get("gwet_ac1") or {}, coefs.get("krippendorff_alpha") or {}
    block = report.get("span_agreement") or {}
    scores = block.get("scores") or {}
    labels = ("each rating's worst severity (no-error, minor, major, critical)" if kind != "da"
              else "each score's band (0–33, 34–66, 67–100; Kocmi et al., 2024)")
    parts = [f"Inter-annotator agreement over {report.get('n_items', 0)} (item, candidate) units on {labels}: "
             f"Gwet's AC1 = {_f(ac1.get('value'))}{_ci(ac1)} (Gwet, 2008) and Krippendorff's α = "
             f"{_f(alpha.get('value'))} (Krippendorff, 2011)."]
    interval = scores.get("krippendorff_alpha_interval") or {}
    pairs = [p for p in scores.get("pairs") or [] if p.get("kendall_tau") is not None]
    if interval or pairs:
        taus = [p["kendall_tau"] for p in pairs]
        tau = (f"; Kendall's τ-b between rater pairs averaged {_f(mean(taus))} over {len(taus)} pair"
               f"{'s' if len(taus) != 1 else ''} (Kendall, 1945)" if taus else "")
        what = protocol_named(str(report["protocol"])).segment_scores_name()
        parts.append(f"Segment {what}: Krippendorff's α (interval) = {_f(interval.get('value'))}{_ci(interval)} "
                     f"(Krippendorff, 2011){tau}.")
    spans = [p for p in block.get("spans") or [] if (p.get("overlap") or {}).get("f1") is not None]
    if spans:
        chars = [p["characters"]["f1"] for p in spans if (p.get("characters") or {}).get("f1") is not None]
        parts.append(f"Error spans: mean overlap F1 {_f(mean(p['overlap']['f1'] for p in spans))}"
                     + (f" and character-level F1 {_f(mean(chars))}" if chars else "")
                     + f" over {len(spans)} rater pair{'s' if len(spans) != 1 else ''}.")
    category_words = []
    for key, words in (("categories", "on full categories"), ("categories_top_level", "on top-level categories")):
        pooled = ((block.get(key) or {}).get("pooled") or {}).get("coefficients") or {}
        cat = pooled.get("gwet_ac1")
        if cat and cat.get("value") is not None:
            category_words.append(f"{_f(cat['value'])}{_ci(cat)} {words}")
    if category_words:
        parts.append(f"Categories of overlapping spans, matched one to one "
                     f"({(block.get('categories') or {}).get('n_matched', 0)} matched pairs): Gwet's AC1 = "
                     + " and ".join(category_words) + ".")
    return " ".join(parts) + " Standard errors and intervals follow Gwet (2014)."


def _ranking_sentence(kind: str, report: dict) -> str:
    ranking = report.get("ranking") or {}
    systems = ranking.get("systems") or []
    if not systems:
        return ""
    score = ranking.get("score") or {}
    ci = score.get("ci") or {}
    settings = ranking.get("settings") or {}
    order = "mean z-score" if settings.get("order") == "z" else "mean score"
    clusters: dict[Any, list[str]] = {}
    for s in systems:
        clusters.setdefault(s.get("cluster"), []).append(f"{s['system']} ({_f(s.get('score'), 2)})")
    listing = "; ".join(", ".join(names) for names in clusters.values())
    return (f"A system's score is the mean over items of the mean over annotators, with a paired percentile "
            f"bootstrap 95% CI ({ci.get('n_boot')} resamples of items, seed {ci.get('seed')}). Systems were ranked "
            f"as in WMT ({CITATIONS['wmt']}; Appraise's ComputeWMT23Results, {CITATIONS['appraise']}): per-annotator "
            f"z-scores{protocol_named(str(report['protocol'])).z_scores_of()}, systems ordered by {order}, and a one-sided "
            f"Mann–Whitney U test on the items both systems were scored on for every pair (p < "
            f"{settings.get('p_level', 0.05)} a win); clusters of systems not separated by significant wins, in "
            f"order (clusters separated by semicolons): {listing}.")


def methods_paragraph(report: dict, facts: dict, product: str, version: str) -> str:
    """The methods paragraph of a span/score study: figures from ``report``, design from its ``facts``."""
    kind = span_page.score_kind(report)
    parts = [fx.opening_sentence(facts, product, version),
             _protocol_sentence(kind, facts, report), _design_sentence(report, facts),
             fx.selection_sentence(facts),
             fx.allocation_sentence(facts), _qc_sentence(kind, report, facts),
             fx.single_rater_sentence(facts, "segment") or _agreement_sentence(kind, report),
             _ranking_sentence(kind, report)]
    return " ".join(p for p in parts if p)


# ---------------------------------------------------------------- tables
def ranking_rows(report: dict, *, latex: bool, escape: Any) -> tuple[list[str], list[list[str]], list[bool]]:
    """Columns, rows (strings, escaped for LaTeX) and, per row, whether it opens a new cluster."""
    kind = span_page.score_kind(report)
    columns = ["Cluster", "Rank", "System", kind.upper(), "95% CI", "z"]
    rows, breaks = [], []
    for s in span_page.ranking_rows(report):
        ci = s.get("score_ci")
        name = escape(s["system"]) if latex else s["system"]
        if s.get("is_reference"):
            name += "$^\\dagger$" if latex else " †"
        rank = s["rank_range_text"].replace("–", "--") if latex else s["rank_range_text"]
        interval = f"[{_f(ci[0], 2)}, {_f(ci[1], 2)}]" if ci else ""
        z = _f(s.get("z"))
        if latex and z.startswith("-"):
            z = "$-$" + z[1:]
        rows.append([str(s.get("cluster")), rank, name, _f(s.get("score"), 2), interval, z])
        breaks.append(bool(s["cluster_start"]))
    return columns, rows, breaks


def ranking_caption(report: dict) -> str:
    ranking = report.get("ranking") or {}
    score = ranking.get("score") or {}
    kind = span_page.score_kind(report)
    direction = "lower is better" if span_page.lower_is_better(report) else "higher is better"
    refs = any(s.get("is_reference") for s in ranking.get("systems") or [])
    return (f"Human ranking ({kind.upper()}, {direction}; {span_page.weights_text(score)}). Systems in a cluster "
            f"are not significantly different; every system beats all systems of the clusters below it (one-sided "
            f"Mann–Whitney U on shared items, p < {(ranking.get('settings') or {}).get('p_level', 0.05)}; "
            f"{CITATIONS['wmt']}). Rank: rank range; 95% CI: paired bootstrap over items "
            f"({(score.get('ci') or {}).get('n_boot')} resamples); z: mean per-annotator z-score."
            + (" † human reference." if refs else ""))


def agreement_rows(report: dict) -> list[tuple[str, dict]]:
    """The span rows appended to the agreement table: score α (interval) and category AC1."""
    block = report.get("span_agreement") or {}
    rows: list[tuple[str, dict | None]] = [
        ("Krippendorff's α, interval (segment scores)", (block.get("scores") or {}).get("krippendorff_alpha_interval"))]
    for key, words in (("categories", "error categories"), ("categories_top_level", "top-level categories")):
        cat = block.get(key)
        if cat:
            rows.append((f"Gwet's AC1 ({words} of overlapping spans)",
                         ((cat.get("pooled") or {}).get("coefficients") or {}).get("gwet_ac1")))
    return [(label, c) for label, c in rows if c is not None]
