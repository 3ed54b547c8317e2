"""The study report as a paper needs it: a methods paragraph, and the ranking and agreement tables as LaTeX or Markdown.

Everything here is built from the report dict (``agreement SLUG --json``): its
numbers and its ``facts`` block (evaluators/reports/facts.py), so the paragraph and
the tables show exactly the report's numbers and claim nothing the study does not
record. The paragraph is a draft to edit, with each statistic's
citation; the LaTeX tables use ``booktabs`` (``\\toprule``, ``\\midrule``,
``\\bottomrule``).
"""
from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.reports import facts as fx
from evaluators.reports import span_page, span_paper
from evaluators.reports.text import exclusion_clause
from protocols.registry import UnknownProtocol, protocol_named
from protocols.spec import ProtocolSpec

#: The product's release; the commit is added when the code runs from a git checkout.
VERSION = "0.13"
PRODUCT = "Discourse MT human evaluation"

COEFFICIENT_LABELS = {"percent_agreement": "Percent agreement", "gwet_ac1": "Gwet's AC1",
                      "fleiss_kappa": "Fleiss' κ", "conger_kappa": "Conger's κ",
                      "krippendorff_alpha": "Krippendorff's α", "brennan_prediger": "Brennan–Prediger",
                      "cohen_kappa": "Cohen's κ"}
LATEX_LABELS = {"percent_agreement": "Percent agreement", "gwet_ac1": "Gwet's AC$_1$",
                "fleiss_kappa": "Fleiss' $\\kappa$", "conger_kappa": "Conger's $\\kappa$",
                "krippendorff_alpha": "Krippendorff's $\\alpha$", "brennan_prediger": "Brennan--Prediger",
                "cohen_kappa": "Cohen's $\\kappa$"}
TABLE_NAMES = ("ranking", "agreement")
FORMATS = ("latex", "markdown")


@lru_cache(maxsize=1)
def version() -> str:
    """``VERSION`` plus the short commit when the code is a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{VERSION}, commit {commit}" if commit else VERSION


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def _ci(block: dict) -> str:
    if block.get("ci_low") is None or block.get("ci_high") is None:
        return ""
    return f", 95% CI [{_f(block['ci_low'])}, {_f(block['ci_high'])}]"


def methods_paragraph(report: dict) -> str:
    """A ready-to-edit methods paragraph, written only from the report's ``facts`` and its numbers.

    Every figure comes from ``report``; every statistic is cited; a design fact the study does not
    record (``None`` in ``facts``) gives no claim, and what an imported file leaves out is said to be
    not recorded (evaluators/reports/facts.py).
    """
    facts = report.get("facts") or {}
    if span_page.is_span_report(report):
        return span_paper.methods_paragraph(report, facts, PRODUCT, version())
    policies = report.get("policies", {})
    coefs = report.get("coefficients", {})
    shown = fx.display_clauses(facts)
    if fx.how(facts) == "native":
        shown.insert(0, "document blocks" if facts.get("unit") == "document" else "sentences in context")
    try:
        spec = protocol_named(str(facts.get("protocol") or report.get("protocol")))
    except UnknownProtocol:  # a report that names no registered protocol: the generic words
        spec = ProtocolSpec()
    design = (f"Annotators {spec.methods_design_words()}"
              + (f" ({'; '.join(shown)})" if shown else "") + ".")
    parts = [fx.opening_sentence(facts, PRODUCT, version()), design, fx.not_recorded_sentence(facts),
             f"The study had {fx.systems_clause(facts)}; "
             f"{fx.raters_clause(facts, int(policies.get('n_judgments_in', 0)))}.", fx.selection_sentence(facts),
             fx.allocation_sentence(facts)]
    qc = [fx.timing_clause(facts), *fx.control_clauses(facts)]
    excluded = exclusion_clause(int(facts.get("n_excluded") or 0), policies.get("excluded"))
    parts.append("For quality control, " + "; ".join(qc) + excluded)
    unit = report.get("unit", "items")
    coding = policies.get("ranking_coding")
    coding_words = spec.methods_coding_words(coding)
    ties_words = "ties kept as a category" if policies.get("ties") == "keep" else "tied pairs removed"
    ac1 = coefs.get("gwet_ac1") or {}
    fleiss = coefs.get("fleiss_kappa") or {}
    alpha = coefs.get("krippendorff_alpha") or {}
    parts.append(fx.single_rater_sentence(facts, "item") or (
        f"Inter-annotator agreement was computed over {report.get('n_items', 0)} {unit}{coding_words} "
        f"({ties_words}; control items {'excluded' if policies.get('spam') == 'drop' else 'included'}): "
        f"Gwet's AC1 = {_f(ac1.get('value'))}{_ci(ac1)} (Gwet, 2008), Fleiss' κ = {_f(fleiss.get('value'))} "
        f"(Fleiss, 1971) and Krippendorff's α = {_f(alpha.get('value'))} (Krippendorff, 2011); standard "
        "errors and intervals follow Gwet (2014)."))
    parts.append(_ranking_sentence(report.get("ranking")))
    control = report.get("control")
    if control:
        hidden = "hidden " if (facts.get("recorded") or {}).get("blinding") is True else ""
        parts.append(f"The {hidden}reference won outright in {control['share']:.1%} of the "
                     f"{control['n_judgments']} judgments that showed it.")
    return " ".join(p for p in parts if p)


#: The ranking's ``rank_by`` in words (evaluators.stats.ranking.system_ranking).
RANK_BY_WORDS = {"bt": "Bradley–Terry strength", "expected_wins": "expected wins", "win_rate": "win rate"}


def _ranking_sentence(ranking: dict | None) -> str:
    """The pairwise ranking: the order's criterion, and each system's figures as the ranking table prints them."""
    if not ranking or not ranking.get("systems"):
        return ""
    ordered = ", ".join(f"{s['system']} ({_f(s.get('expected_wins'))}, {_f(s.get('bt'), 2)})"
                        for s in ranking["systems"])
    boot = (f"with 95% confidence intervals from {ranking.get('n_boot')} bootstrap resamples of items "
            f"(seed {ranking.get('seed')})" if ranking.get("n_boot") else "without bootstrap intervals")
    by = RANK_BY_WORDS.get(str(ranking.get("rank_by")), str(ranking.get("rank_by")))
    text = (f"Systems were ranked from the pairwise outcomes of real items by {by}, {boot}; in that order, each "
            f"system's expected wins (Bojar et al., 2016) and Bradley–Terry strength (log scale, mean 0; Bradley "
            f"and Terry, 1952): {ordered}.")
    sign = ranking.get("sign_test")
    if sign:
        text += (f" A two-sided sign test between {sign.get('system_a')} and {sign.get('system_b')} "
                 f"gives p = {_f(sign.get('p_value'))} (ties left out; Läubli et al., 2018).")
    return text


# ---------------------------------------------------------------- tables
def _ranking_rows(report: dict) -> tuple[list[str], list[list[str]]]:
    columns = ["Rank", "System", "Expected wins", "95% CI", "BT", "Wins", "Ties", "Losses"]
    rows = []
    for s in (report.get("ranking") or {}).get("systems", []):
        rng = s.get("rank_range")
        position = s.get("position", s["rank"])
        rank = str(position) if not rng or rng[0] == rng[1] else f"{position} ({rng[0]}–{rng[1]})"
        ci = s.get("expected_wins_ci")
        rows.append([rank, s["system"], _f(s.get("expected_wins")),
                     f"[{_f(ci[0])}, {_f(ci[1])}]" if ci and ci[0] is not None else "", _f(s.get("bt"), 2),
                     str(s["wins"]), str(s["ties"]), str(s["losses"])])
    return columns, rows


def _agreement_rows(report: dict, *, latex: bool) -> tuple[list[str], list[list[str]]]:
    columns = ["Coefficient", "Value", "SE", "95% CI", "p"]
    rows = []
    labels = LATEX_LABELS if latex else COEFFICIENT_LABELS
    for key, label in labels.items():
        c = (report.get("coefficients") or {}).get(key)
        if not c:
            continue
        ci = f"[{_f(c.get('ci_low'))}, {_f(c.get('ci_high'))}]" if c.get("ci_low") is not None else ""
        p = c.get("p_value")
        rows.append([label, _f(c.get("value")), _f(c.get("se")), ci,
                     ("< 0.001" if p is not None and p < 0.001 else _f(p))])
    if span_page.is_span_report(report):
        for label, c in span_paper.agreement_rows(report):
            if latex:
                label = _latex_escape(label).replace("AC1", "AC$_1$")
            p = c.get("p_value")
            ci = f"[{_f(c.get('ci_low'))}, {_f(c.get('ci_high'))}]" if c.get("ci_low") is not None else ""
            rows.append([label, _f(c.get("value")), _f(c.get("se")), ci,
                         ("< 0.001" if p is not None and p < 0.001 else _f(p))])
    return columns, rows


def _span_ranking_table(report: dict, latex: bool) -> str:
    """WMT-style ranking table of a span study: a rule between clusters in LaTeX."""
    columns, rows, breaks = span_paper.ranking_rows(report, latex=latex, escape=_latex_escape)
    caption = span_paper.ranking_caption(report)
    latex_caption = _latex_escape(caption)
    if not latex:
        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines) + f"\n\n{caption}\n"
    body: list[str] = []
    for row, new_cluster in zip(rows, breaks):
        if new_cluster:
            body.append("\\midrule")
        body.append(" & ".join(row) + " \\\\")
    return "\n".join([
        "\\begin{table}[t]", "\\centering", "\\begin{tabular}{rllrcr}", "\\toprule",
        " & ".join(_latex_escape(c) for c in columns) + " \\\\", "\\midrule", *body, "\\bottomrule",
        "\\end{tabular}", f"\\caption{{{latex_caption}}}",
        "\\label{tab:ranking}", "\\end{table}",
    ]) + "\n"


_LATEX = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "_": "\\_", "#": "\\#", "$": "\\$", "{": "\\{",
          "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}", "–": "--", "<": "$<$",
          "α": "$\\alpha$", "τ": "$\\tau$", "κ": "$\\kappa$", "−": "$-$", "†": "$^\\dagger$"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def table(report: dict, name: str, fmt: str) -> str:
    """The ``ranking`` or ``agreement`` table as ``latex`` (booktabs) or ``markdown``."""
    if name not in TABLE_NAMES:
        raise ValueError(f"table: {name!r} is not one of {', '.join(TABLE_NAMES)}")
    if fmt not in FORMATS:
        raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    latex = fmt == "latex"
    if name == "ranking" and span_page.is_span_report(report):
        return _span_ranking_table(report, latex)
    columns, rows = _ranking_rows(report) if name == "ranking" else _agreement_rows(report, latex=latex)
    policies = report.get("policies", {})
    if name == "agreement" and span_page.is_span_report(report):
        caption = (f"Inter-annotator agreement over {report.get('n_items', 0)} (item, candidate) units, "
                   f"{report.get('n_raters', 0)} annotators; categories: {report.get('categories_are', 'labels')}; "
                   "the last rows: Krippendorff's interval α of the segment scores and AC1 of the categories "
                   "of overlapping spans.")
    elif name == "ranking":
        ranking = report.get("ranking") or {}
        by = RANK_BY_WORDS.get(str(ranking.get("rank_by")), str(ranking.get("rank_by")))
        caption = (f"Human ranking of the systems by {by} (Rank: position, bootstrap rank range in parentheses); "
                   f"95% bootstrap CIs ({ranking.get('n_boot')} resamples of items); BT: Bradley–Terry strength "
                   "(log scale, mean 0).")
    else:
        caption = (f"Inter-annotator agreement over {report.get('n_items', 0)} {report.get('unit', 'items')}, "
                   f"{report.get('n_raters', 0)} annotators (ties {policies.get('ties')}, spam {policies.get('spam')}).")
    if not latex:
        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines) + f"\n\n{caption}\n"
    align = "l" * 2 + "r" * (len(columns) - 2) if name == "ranking" else "l" + "r" * (len(columns) - 1)
    body = [" & ".join(cell if (name == "agreement" and k == 0) else _latex_escape(cell)
                       for k, cell in enumerate(row)) + " \\\\" for row in rows]
    return "\n".join([
        "\\begin{table}[t]", "\\centering", f"\\begin{{tabular}}{{{align}}}", "\\toprule",
        " & ".join(_latex_escape(c) for c in columns) + " \\\\", "\\midrule", *body, "\\bottomrule",
        "\\end{tabular}", f"\\caption{{{_latex_escape(caption)}}}", f"\\label{{tab:{name}}}", "\\end{table}",
    ]) + "\n"
