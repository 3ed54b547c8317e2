"""A study's report: from the exported judgments to agreement, controls and the system ranking.

Why one module of ~500 lines: the report is one pure function of the export frame with
its policies; keeping the frame checks, conversions and blocks in one file keeps the
"every number reproducible from the export" guarantee readable in one sitting.

Every number of a report is a function of the EXPORTED judgments frame
(``annotation.exporting.judgments.judgments_frame``, or the same columns read back from an
``export_judgments`` CSV/JSONL file), so ``agreement --judgments FILE`` on an
export reproduces ``agreement SLUG`` exactly.  The pure part,
:func:`report_from_frame`, takes a DataFrame and never touches the database;
:func:`study_report` only loads the frame.

Policies (query parameters / command options, defaults first):

* ``ties=keep|drop`` -- keep "tie" as a category of its own, or drop tied
  units.  The report always carries the other variant too
  (``without_ties`` or ``with_ties``), as DiP Table 13 does.
* ``spam=drop|keep`` -- spam (control) items out of, or in, the agreement.
  The control figure and the system ranking always use real items only.
* ``excluded=drop|keep`` -- excluded annotators out of, or in, everything.
* ``pilot=drop|keep`` -- pilot annotators' judgments (column ``pilot``) out of,
  or in, everything; an export without the column has no pilot judgments.
* invalid answers (choice ``invalid``, missing ranks/labels) are never a
  category: they are dropped and counted (``n_invalid``, ``policies.dropped``).
"""
from __future__ import annotations

import itertools
import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pandas._libs import lib

from annotation.exporting.judgments import judgment_cells
from annotation.quality.checks import study_context_probes
from annotation.quality.span_controls import study_span_controls
from evaluators.reports import span_report as sr
from evaluators.reports.prefill import prefill_sentence, skip_clean_sentence
from evaluators.reports.facts import data_facts, file_facts, study_facts
from evaluators.stats import ratings as rt
from evaluators.stats.agreement import agreement
from evaluators.stats.coding import WEIGHT_SCHEMES
from evaluators.stats.ranking import system_ranking
from studies.models import Candidate
from protocols.registry import UnknownProtocol, names as protocol_names, protocol_named

if TYPE_CHECKING:
    from protocols.spec import ProtocolSpec

POLICY_CHOICES: dict[str, tuple[str, ...]] = {
    "ties": ("keep", "drop"),
    "spam": ("drop", "keep"),
    "excluded": ("drop", "keep"),
    "pilot": ("drop", "keep"),
    "ranking_coding": ("system", "position"),
}
DEFAULT_POLICIES = {name: choices[0] for name, choices in POLICY_CHOICES.items()}
#: Columns an export file must have (the rest are optional).
EXPORT_REQUIRED = ("item", "annotator", "system", "judgment", "protocol")
NO_PHENOMENON = "(none)"

METHODS: dict[str, str] = {
    "unit": "Rankings become one unit per item and candidate pair, in sorted system order (never screen order); "
            "the label is the better-ranked system or 'tie' (Bojar et al. 2016) — or, with ranking_coding=position, "
            "'first' / 'second' / 'tie' by the winner's place in the pair. Choices and labels: one unit per item.",
    "percent_agreement": "Share of agreeing rater pairs per unit, averaged over units rated twice or more "
                         "(Gwet 2014, ch. 2).",
    "gwet_ac1": "Gwet's AC1 (AC2 with weights): chance agreement from the category prevalence, robust when one "
                "category dominates, as the hidden-reference control makes it (Gwet 2008; DiP A.1).",
    "cohen_kappa": "Cohen's kappa of the two raters on the units both rated (Cohen 1960); per pair of annotators "
                   "in the matrix.",
    "fleiss_kappa": "Fleiss' kappa, multi-rater, chance from pooled category shares (Fleiss 1971).",
    "conger_kappa": "Conger's kappa, multi-rater generalisation of Cohen's kappa (Conger 1980).",
    "krippendorff_alpha": "Krippendorff's alpha over units rated at least twice (Krippendorff 2011); standard "
                          "error after Gwet (2014).",
    "brennan_prediger": "Brennan–Prediger: chance agreement 1/q for q categories (Brennan & Prediger 1981).",
    "inference": "Standard errors by Gwet's linearisation (infinite population); 95% CI with t(n−1); p-value "
                 "one-sided, 1 − T(n−1)(coefficient / SE), as Gwet's R package irrCAC.",
    "ties": "With ties: 'tie' is a category. Without ties: tied units are removed before computing.",
    "by_phenomenon": "Agreement on the units of items of each phenomenon; #reference won / #system won / #tie / "
                     "#invalid count judgments as in DiP Table 13 (neither counts as a tie).",
    "control": "How often the hidden reference won outright (ranked strictly first, or chosen) over real "
               "(non-spam) items that have a reference (DiP A.1).",
    "ranking": "Human system ranking from pairwise outcomes on real items: wins, expected wins (Bojar et al. 2016), "
               "Bradley–Terry strengths, bootstrap 95% CIs resampling items; sign test for two systems "
               "(Läubli et al. 2018).",
}


class ReportError(ValueError):
    """The judgments cannot be turned into a report; the message names the column or value."""


# ---------------------------------------------------------------- export frame -> stats frame
_TRUE = {"true", "1", "yes", "t", "y"}
_FALSE = {"false", "0", "no", "f", "n", ""}


def _as_bool(series: pd.Series, column: str, source: str) -> pd.Series:
    """Booleans from real bools or the export's 'true'/'false' strings."""
    def conv(v: Any) -> bool:
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            return False
        if isinstance(v, (int, np.integer)) and v in (0, 1):
            return bool(v)
        text = str(v).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ReportError(f"{source}: column {column!r}: {v!r} is not a boolean (true/false)")
    if series.dtype == bool:  # a stored study's column: every value converts to itself
        return series.astype(bool)
    return series.map(conv).astype(bool)


_NA = pd.NA


def _blank(v: Any) -> Any:
    """A cell with surrounding blanks stripped; None for a missing or blank one."""
    if isinstance(v, str):  # the common case first (a string is never None, NA or NaN)
        return v.strip() or None
    if v is None or v is _NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return v


def _blank_to_none(series: pd.Series) -> pd.Series:
    """``series.astype(object).map(_blank)``, with the values typed as ``Series.map`` types them (pandas 2's
    ``map_infer`` ends with ``maybe_convert_objects``, which pandas-stubs do not declare) but without its call
    through pandas per value."""
    cells = series.to_numpy(dtype=object)
    kinds = set(map(type, cells))
    values: np.ndarray
    if str in kinds and kinds <= {str, type(None)}:  # text and None (most columns): each distinct text once
        codes, uniques = pd.factorize(cells)  # None -> -1, the table's last cell
        table = np.empty(len(uniques) + 1, dtype=object)
        for k, text in enumerate(uniques):
            table[k] = _blank(text)
        table[-1] = None
        values = table[codes]
    elif kinds <= {int, type(None)}:  # whole numbers (not bools) and None: each its own clean value
        values = cells.copy()
    else:
        values = np.fromiter(map(_blank, cells), dtype=object, count=len(series))
    typed = lib.maybe_convert_objects(values)  # type: ignore[attr-defined]
    return pd.Series(typed, index=series.index, name=series.name)



def stats_frame(export: pd.DataFrame, *, source: str = "judgments") -> tuple[pd.DataFrame, str, str]:
    """The export's columns renamed and typed for :mod:`evaluators.stats.ratings`.

    Returns ``(frame, study slug, protocol)``.  Works on the in-memory export
    (typed columns) and on a CSV/JSONL export read back as text, giving the
    same frame, which is what makes a report reproducible from the file.
    Superseded revisions (``is_current`` false, in ``--history`` exports) are
    ignored: a report always uses each annotator's final answer.
    """
    missing = [c for c in EXPORT_REQUIRED if c not in export.columns]
    if missing:
        raise ReportError(f"{source}: missing column(s) {', '.join(missing)} (an export_judgments file has them)")
    df = export
    if "is_current" in df.columns:
        df = df[_as_bool(df["is_current"], "is_current", source)]
    protocols = sorted({str(p).strip() for p in df["protocol"].dropna()} - {""})
    if len(protocols) > 1:
        raise ReportError(f"{source}: column 'protocol' mixes {', '.join(protocols)}; export one study per file")
    protocol = protocols[0] if protocols else ""
    if protocol and protocol not in protocol_names():
        raise ReportError(f"{source}: column 'protocol': unknown protocol {protocol!r} ({', '.join(protocol_names())})")
    studies = sorted({str(s) for s in df["study"].dropna()} - {""}) if "study" in df.columns else []
    if len(studies) > 1:
        raise ReportError(f"{source}: column 'study' mixes studies {', '.join(studies)}; export one study per file")
    answer_col = protocol_named(protocol).answer_column if protocol else None
    if answer_col and answer_col not in df.columns:
        raise ReportError(f"{source}: missing column {answer_col!r}, needed for a {protocol} study")
    cleaned: dict[str, pd.Series] = {}

    def clean(column: str) -> pd.Series:  # each column's cells cleaned once (several are read twice)
        if column not in cleaned:
            cleaned[column] = _blank_to_none(df[column])
        return cleaned[column]

    for col in ("item", "annotator", "system", "judgment"):
        blank = clean(col).isna().to_numpy()
        if blank.any():
            row = int(np.flatnonzero(blank)[0])
            raise ReportError(f"{source}: row {row + 1}: blank {col!r}")
    out = pd.DataFrame({
        "judgment": df["judgment"].astype(str).to_numpy(),
        "item": df["item"].astype(str).to_numpy(),
        "annotator": df["annotator"].astype(str).to_numpy(),
        "system": df["system"].astype(str).to_numpy(),
    })
    out["is_reference"] = _as_bool(df["is_reference"], "is_reference", source).to_numpy() \
        if "is_reference" in df.columns else False
    out["is_spam_item"] = _as_bool(df["is_spam"], "is_spam", source).to_numpy() if "is_spam" in df.columns else False
    out["excluded"] = _as_bool(df["excluded"], "excluded", source).to_numpy() if "excluded" in df.columns else False
    out["pilot"] = _as_bool(df["pilot"], "pilot", source).to_numpy() if "pilot" in df.columns else False
    if "document" in df.columns:  # for the facts block (raters per document)
        out["document"] = clean("document").to_numpy()
    if "duration_ms" in df.columns:  # for the facts block (were answer times recorded?) and time per item
        out["timed"] = clean("duration_ms").notna().to_numpy()
        out["duration_ms"] = pd.to_numeric(clean("duration_ms"), errors="coerce").to_numpy()
    if "suggestions" in df.columns:  # studies with suggested spans (evaluators/reports/prefill.py)
        out["suggestions"] = clean("suggestions").to_numpy()
        out["assisted"] = (clean("assisted").to_numpy() if "assisted" in df.columns else None)
    phen = clean("phenomenon") if "phenomenon" in df.columns else pd.Series(None, index=df.index)
    out["phenomenon"] = phen.fillna(NO_PHENOMENON).astype(str).to_numpy()
    if "rank" in df.columns:
        rank = pd.to_numeric(clean("rank"), errors="coerce")
        bad = clean("rank").notna() & rank.isna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ReportError(f"{source}: row {row + 1}: column 'rank': {df['rank'].iloc[row]!r} is not a number")
        out["rank"] = rank.astype(float).to_numpy()
    else:
        out["rank"] = np.nan
    out["choice"] = clean("choice").to_numpy() if "choice" in df.columns else None
    out["label"] = clean("label").to_numpy() if "label" in df.columns else None
    if "score" in df.columns:
        score = pd.to_numeric(clean("score"), errors="coerce")
        bad = clean("score").notna() & score.isna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ReportError(f"{source}: row {row + 1}: column 'score': {df['score'].iloc[row]!r} is not a number")
        out["score"] = score.astype(float).to_numpy()
    if "spans" in df.columns:
        spans = clean("spans")
        for row, value in enumerate(spans):
            if isinstance(value, str):
                try:
                    parsed = json.loads(value)
                except json.JSONDecodeError:
                    parsed = None
                if not isinstance(parsed, list):
                    raise ReportError(f"{source}: row {row + 1}: column 'spans': not a JSON list of spans")
        out["spans"] = spans.to_numpy()
    slug = studies[0] if studies else ""
    return out, slug, protocol


# ---------------------------------------------------------------- conversions
def _spec(protocol: str) -> ProtocolSpec:
    try:
        return protocol_named(protocol)
    except UnknownProtocol as exc:
        raise ReportError(f"unknown protocol {exc}") from None


def _convert(frame: pd.DataFrame, protocol: str, *, ties: str, spam: str, excluded: str,
             ranking_coding: str = "system") -> tuple[pd.DataFrame, dict]:
    try:
        return _spec(protocol).agreement_ratings(frame, ties=ties, spam=spam, excluded=excluded,
                                                 ranking_coding=ranking_coding)
    except ValueError as exc:
        raise ReportError(str(exc)) from None


def _without_ties(ratings: pd.DataFrame, applied: dict) -> tuple[pd.DataFrame, dict]:
    """The ``ties="drop"`` conversion derived from the ``ties="keep"`` one.

    Exactly what the converters do with ``ties="drop"`` (remove the units
    labelled 'tie' last, count them), without converting the judgments a
    second time -- the conversion is the costly part on a large study.
    ``tests/test_report_stats.py`` checks the equality.
    """
    is_tie = ratings["label"] == rt.TIE
    out = ratings[~is_tie].reset_index(drop=True)
    policies = {**applied, "ties": "drop", "dropped_units": {**applied.get("dropped_units", {}), "tie": int(is_tie.sum())},
                "dropped_judgments": dict(applied.get("dropped_judgments", {})),
                "n_units_out": int(len(out)), "n_judgments_used": int(out["judgment"].nunique()) if len(out) else 0}
    return out, policies


def _ratings_both(frame: pd.DataFrame, protocol: str, *, spam: str, excluded: str,
                  ranking_coding: str = "system") -> dict[str, tuple[pd.DataFrame, dict]]:
    """Ratings with ties kept and with ties dropped, keyed by the ``ties`` policy."""
    keep = _convert(frame, protocol, ties="keep", spam=spam, excluded=excluded, ranking_coding=ranking_coding)
    if not _spec(protocol).has_ties:
        return {"keep": keep, "drop": keep}
    return {"keep": keep, "drop": _without_ties(*keep)}


def _ratings(frame: pd.DataFrame, protocol: str, *, ties: str, spam: str, excluded: str,
             ranking_coding: str = "system") -> tuple[pd.DataFrame, dict]:
    return _ratings_both(frame, protocol, spam=spam, excluded=excluded, ranking_coding=ranking_coding)[ties]


def _pairs(frame: pd.DataFrame, protocol: str, *, excluded: str) -> pd.DataFrame | None:
    """Pairwise outcomes on REAL items (spam never counts) for the system ranking."""
    return _spec(protocol).human_pairs(frame, excluded=excluded)[0]


def _agreement(ratings: pd.DataFrame, weights: str) -> dict:
    block = agreement(ratings, item="item", rater="rater", label="label", weights=weights)
    return block


# ---------------------------------------------------------------- DiP Table 13 counts
OUTCOME_COLUMNS = ["judgment", "phenomenon", "is_spam_item", "excluded", "outcome", "neither"]


def outcome_counts(frame: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """One row per judgment that shows a reference: ``phenomenon`` and its ``outcome``.

    Outcomes (the protocol's ``reference_outcomes``): ``reference`` (the reference
    won outright), ``system`` (a system won), ``tie`` (a tie, or choice ``neither``),
    ``invalid`` (no usable answer).  A protocol whose answers contest no reference
    (judgment) gives an empty frame.
    """
    outcomes = _spec(protocol).reference_outcomes(frame) if not frame.empty else None
    return pd.DataFrame(columns=OUTCOME_COLUMNS) if outcomes is None else outcomes[OUTCOME_COLUMNS]


def reference_judgments(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The rows of the judgments that show a reference, and one row per such judgment (index ``judgment``)
    with its ``phenomenon``, ``is_spam_item`` and ``excluded``; ``(empty outcomes, None)`` when none does.

    What every protocol's ``reference_outcomes`` starts from.
    """
    with_ref = frame.groupby("judgment", sort=False)["is_reference"].transform("any")
    df = frame[with_ref]
    if df.empty:
        return pd.DataFrame(columns=OUTCOME_COLUMNS), None
    head = df.groupby("judgment", sort=False).agg(
        phenomenon=("phenomenon", "first"), is_spam_item=("is_spam_item", "first"), excluded=("excluded", "first"))
    return df, head


def _count_block(outcomes: pd.DataFrame) -> dict:
    counts = outcomes["outcome"].value_counts()
    return {
        "n_judgments_with_reference": int(len(outcomes)),
        "n_reference_won": int(counts.get("reference", 0)),
        "n_system_won": int(counts.get("system", 0)),
        "n_tie": int(counts.get("tie", 0)),
        "n_neither": int(outcomes["neither"].sum()) if len(outcomes) else 0,
        "n_invalid": int(counts.get("invalid", 0)),
    }


def _control(outcomes: pd.DataFrame, excluded: str) -> dict | None:
    real = outcomes[~outcomes["is_spam_item"].astype(bool)]
    if excluded == "drop":
        real = real[~real["excluded"].astype(bool)]
    if real.empty:
        return None
    block = _count_block(real)
    n = block["n_judgments_with_reference"]
    share = block["n_reference_won"] / n
    # Wilson score interval: well-behaved for shares near 1, where the reference usually sits.
    z = 1.959963984540054
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return {"share": share, "ci_low": max(0.0, centre - half), "ci_high": min(1.0, centre + half),
            "n_judgments": n, **{k: v for k, v in block.items() if k != "n_judgments_with_reference"}}


# ---------------------------------------------------------------- system ranking
def _ranking(pairs: pd.DataFrame | None, protocol: str, *, seed: int, n_boot: int, notes: list[str]) -> dict | None:
    if pairs is None:
        notes.append(f"no system ranking for the {protocol} protocol (labels are not preferences)")
        return None
    if pairs.empty:
        notes.append("no pairwise outcomes yet: no system ranking")
        return None
    return with_positions(system_ranking(pairs, seed=seed, n_boot=n_boot))


def with_positions(ranking: dict) -> dict:
    """Each ranked system's ``position`` (1..n in the block's order, by score); ``rank`` is the same number.

    The order is the ranking's own (Bradley–Terry strength here; systems with equal strengths by name), so
    ``position`` never repeats; ``rank_range`` keeps the bootstrap's range beside it.
    """
    for position, row in enumerate(ranking["systems"], start=1):
        row["position"] = position
        row["rank"] = position
    return ranking


# ---------------------------------------------------------------- the report
def _check_policies(policies: dict[str, str]) -> None:
    for name, value in policies.items():
        if value not in POLICY_CHOICES[name]:
            raise ReportError(f"{name}: {value!r} is not one of {', '.join(POLICY_CHOICES[name])}")


def pilot_policy(frame: pd.DataFrame, pilot: str) -> tuple[pd.DataFrame, int]:
    """The frame without pilot judgments when ``pilot=drop``, and how many judgments that dropped."""
    if pilot != "drop" or "pilot" not in frame.columns:
        return frame, 0
    flagged = frame["pilot"].astype(bool)
    return frame[~flagged], int(frame.loc[flagged, "judgment"].nunique())


def report_from_frame(
    frame: pd.DataFrame,
    *,
    study: str,
    protocol: str,
    ties: str = "keep",
    spam: str = "drop",
    excluded: str = "drop",
    pilot: str = "drop",
    ranking_coding: str = "system",
    weights: str = "identity",
    seed: int = 0,
    n_boot: int = 1000,
    **span_options: Any,
) -> dict:
    """The study report from a stats frame (see :func:`stats_frame`); pure, no database.

    Top level: the agreement JSON of INTERFACES.md under the chosen policies,
    plus ``study``, ``protocol``, ``unit``, ``policies``, ``with_ties`` /
    ``without_ties`` (the other ties variant), ``by_phenomenon``, ``control``,
    ``ranking``, ``methods`` and ``notes``.  Floats are unrounded; anything
    undefined is ``None`` with a note.  Span and score protocols (mqm, esa) take
    ``span_options`` (``mqm_weights``, ``uses_spans``, ``unit_lengths``, ``ranking_order``;
    see :func:`_span_report`).
    """
    _check_policies({"ties": ties, "spam": spam, "excluded": excluded, "pilot": pilot,
                     "ranking_coding": ranking_coding})
    spec = _spec(protocol)
    notes: list[str] = []
    frame, n_pilot = pilot_policy(frame, pilot)
    if spec.per_candidate_annotations:
        span = _span_report(frame, study=study, protocol=protocol, spam=spam, excluded=excluded, pilot=pilot,
                            n_pilot=n_pilot, weights=weights, seed=seed, n_boot=n_boot, notes=notes, **span_options)
        span["facts"] = data_facts(frame, excluded=excluded, span=True)
        return span
    both = _ratings_both(frame, protocol, spam=spam, excluded=excluded, ranking_coding=ranking_coding)
    ratings, applied = both[ties]
    report: dict[str, Any] = {"study": study, "protocol": protocol, "unit": spec.report_unit}
    try:
        report.update(_agreement(ratings, weights))
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    report["policies"] = {
        "ties": ties, "spam": spam, "excluded": excluded, "pilot": pilot,
        "ranking_coding": ranking_coding if spec.ranking_codings else None,
        "invalid": "drop", "weights": weights, "seed": seed, "n_boot": n_boot,
        "n_judgments_in": applied.get("n_judgments_in", 0),
        "n_judgments_used": applied.get("n_judgments_used", 0),
        "n_units": applied.get("n_units_out", 0),
        "n_pilot_judgments_dropped": n_pilot,
        "dropped": {**{f"judgments_{k}": v for k, v in applied.get("dropped_judgments", {}).items()},
                    **{f"units_{k}": v for k, v in applied.get("dropped_units", {}).items()}},
    }
    other = "drop" if ties == "keep" else "keep"
    other_key = "without_ties" if ties == "keep" else "with_ties"
    if not spec.has_ties:
        report[other_key] = None
        notes.append(f"{protocol} studies have no ties: the with/without-ties variants coincide")
    else:
        other_ratings, _ = both[other]
        report[other_key] = _agreement(other_ratings, weights)

    outcomes = outcome_counts(frame, protocol)
    used = outcomes
    if spam == "drop":
        used = used[~used["is_spam_item"].astype(bool)]
    if excluded == "drop":
        used = used[~used["excluded"].astype(bool)]
    by_phenomenon: dict[str, dict] = {}
    phenomena = sorted(set(ratings["phenomenon"])) if "phenomenon" in ratings.columns and len(ratings) else []
    if phenomena and phenomena != [NO_PHENOMENON]:
        for name in phenomena:
            block = _agreement(ratings[ratings["phenomenon"] == name], weights)
            counts = _count_block(used[used["phenomenon"] == name]) if spec.contests_reference else {}
            by_phenomenon[name] = {**block, **counts}
            if spec.has_ties:
                # DiP Table 13 and Jwalapuram et al. report agreement both with and without ties.
                other_ratings = both[other][0]
                phen_other = other_ratings[other_ratings["phenomenon"] == name]
                by_phenomenon[name][other_key] = _agreement(phen_other, weights) if len(phen_other) else None
    report["by_phenomenon"] = by_phenomenon
    report["control"] = _control(outcomes, excluded) if spec.contests_reference else None
    if report["control"] is None and spec.contests_reference:
        notes.append("no real item shows a hidden reference: no control figure")
    pairs: pd.DataFrame | None
    pairs = spec.pairs_from_ratings(both["keep"][0], spam=spam, ranking_coding=ranking_coding)
    if pairs is None:
        pairs = _pairs(frame, protocol, excluded=excluded)
    report["ranking"] = _ranking(pairs, protocol,
                                 seed=seed, n_boot=n_boot, notes=notes)
    report["methods"] = METHODS
    report["notes"] = notes
    report["facts"] = data_facts(frame, excluded=excluded)
    return report


def _span_report(frame: pd.DataFrame, *, study: str, protocol: str, spam: str, excluded: str, pilot: str,
                 n_pilot: int, weights: str, seed: int, n_boot: int, notes: list[str],
                 mqm_weights: dict[str, Any] | None = None, uses_spans: bool | None = None,
                 unit_lengths: dict[str, int] | None = None, ranking_order: str = "raw") -> dict:
    """The report of an MQM / ESA / DA study (evaluators/reports/span_report.py has the definitions)."""
    n_in = int(frame["judgment"].nunique()) if len(frame) else 0
    try:
        ratings = sr.span_ratings(frame)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    if uses_spans is None:  # a file: DA when no rating carries spans
        uses_spans = _spec(protocol).file_uses_spans(
            bool(len(ratings)) and any(s is not None for s in ratings["span_list"]))
    if excluded == "drop":
        ratings = ratings[~ratings["excluded"].astype(bool)]
    real = ratings[~ratings["is_spam_item"].astype(bool)]
    used = real if spam == "drop" else ratings
    scheme = sr.weights_from(mqm_weights)
    units = sr.agreement_ratings(used, protocol, uses_spans)
    report: dict[str, Any] = {"study": study, "protocol": protocol, "unit": _spec(protocol).report_unit}
    try:
        report.update(agreement(units, item="item", rater="rater", label="label", weights=weights,
                                categories=sr.category_order(units["label"]) or None))
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    report["categories_are"] = "worst severity marked" if uses_spans else "WMT24 score band"
    report["policies"] = {
        "ties": None, "spam": spam, "excluded": excluded, "pilot": pilot, "ranking_coding": None,
        "invalid": "drop", "weights": weights, "seed": seed, "n_boot": n_boot,
        "n_judgments_in": n_in, "n_judgments_used": int(used["judgment"].nunique()) if len(used) else 0,
        "n_units": int(units["item"].nunique()) if len(units) else 0, "n_ratings": int(len(used)),
        "n_pilot_judgments_dropped": n_pilot, "dropped": {},
        "uses_spans": uses_spans, "ranking_order": ranking_order,
    }
    report["with_ties"] = report["without_ties"] = None
    by_phenomenon: dict[str, dict] = {}
    phenomena = sorted(set(units["phenomenon"])) if len(units) else []
    if phenomena and phenomena != [NO_PHENOMENON]:
        for name in phenomena:
            part = units[units["phenomenon"] == name]
            by_phenomenon[name] = agreement(part, item="item", rater="rater", label="label", weights=weights,
                                            categories=sr.category_order(part["label"]) or None)
    report["by_phenomenon"] = by_phenomenon
    report["control"] = None
    scores = sr.segment_scores(real, protocol, scheme) if len(real) else pd.DataFrame(
        columns=["system", "item", "annotator", "score"])
    references = set(real.loc[real["is_reference"].astype(bool), "system"]) if len(real) else set()
    report["ranking"] = sr.ranking_block(scores, protocol, scheme, references=references, seed=seed, n_boot=n_boot,
                                         order=ranking_order)
    if report["ranking"] is None:
        notes.append("no scored segment yet: no system ranking")
    report["errors"] = sr.errors_block(real, scheme, protocol) if uses_spans and len(real) else None
    report["span_agreement"] = sr.span_agreement_block(real, scores, uses_spans=uses_spans, protocol=protocol,
                                                       unit_lengths=unit_lengths) if len(real) else None
    report["methods"] = {**{k: METHODS[k] for k in ("percent_agreement", "gwet_ac1", "cohen_kappa", "fleiss_kappa",
                                                    "conger_kappa", "krippendorff_alpha", "brennan_prediger",
                                                    "inference")},
                         **sr.methods_for(protocol, uses_spans)}
    report.update(_spec(protocol).protocol_blocks(frame, spam=spam, excluded=excluded, seed=seed))
    report["notes"] = notes
    return report


def report_from_export(export: pd.DataFrame, *, source: str = "judgments", **options: Any) -> dict:
    """:func:`report_from_frame` on an export (a file read back, or ``judgments_frame``)."""
    frame, slug, protocol = stats_frame(export, source=source)
    if not protocol:
        raise ReportError(f"{source}: no judgments (the 'protocol' column is empty)")
    report = report_from_frame(frame, study=slug, protocol=protocol, **options)
    report["facts"] = file_facts(report["facts"], source=source, protocol=protocol, frame=frame)
    return report


#: The export columns a report reads (``stats_frame``); the others (times, screen positions) never matter.
REPORT_COLUMNS = ("study", "item", "annotator", "system", "is_reference", "is_spam", "excluded", "pilot", "phenomenon",
                  "rank", "choice", "label", "judgment", "protocol", "is_current", "score", "spans", "document",
                  "duration_ms", "assisted", "suggestions")


def study_export_frame(study: Any) -> pd.DataFrame:
    """The study's export (``annotation.exporting.judgments.judgment_rows``, the source of every export) as a frame.

    Only :data:`REPORT_COLUMNS`, read as tuples (``judgment_cells``: no dict per row, no times or screen
    order read) and collected column-wise: the same values as ``judgments_frame`` without holding every
    row at once, which keeps a large study's report within a few hundred MB.
    """
    columns: dict[str, list] = {c: [] for c in REPORT_COLUMNS}
    rows = judgment_cells(study, REPORT_COLUMNS)
    while chunk := list(itertools.islice(rows, 10_000)):
        for column, values in zip(columns.values(), zip(*chunk)):
            column.extend(values)
    if not columns["judgment"]:
        return pd.DataFrame(columns, columns=list(REPORT_COLUMNS))
    # What pandas does to a list (an object array of its values, then ``maybe_convert_objects``; the frame then
    # infers datetimes from an object array as from a list), with NumPy filling the object arrays (pandas'
    # element-wise copy of each list cost ~2.5 ms a column on a release)
    return pd.DataFrame({c: lib.maybe_convert_objects(np.fromiter(v, dtype=object, count=len(v)))  # type: ignore[attr-defined]
                         for c, v in columns.items()}, columns=list(REPORT_COLUMNS))


def study_report(study: Any, **options: Any) -> dict:
    """The report of a stored study: its export frame through :func:`report_from_frame`."""
    frame, _, _ = stats_frame(study_export_frame(study), source=f"study {study.slug}")
    if not study.spec.per_candidate_annotations:
        report = report_from_frame(frame, study=study.slug, protocol=study.protocol, **options)
        report["facts"] = study_facts(study, report["facts"])
        _add_context_probes(report, study, options)
        return report
    options = {"mqm_weights": study.mqm_weights or None, "uses_spans": study.uses_spans,
               "unit_lengths": _unit_lengths(study), **options}
    report = report_from_frame(frame, study=study.slug, protocol=study.protocol, **options)
    report["facts"] = study_facts(study, report["facts"])
    if report.get("prefill"):
        report["prefill"]["methods"] = prefill_sentence(report["facts"].get("prefill"), report["prefill"])
    elif skip_clean_sentence(report["facts"].get("prefill")):
        report["notes"].append(skip_clean_sentence(report["facts"].get("prefill")))
    report["control"] = study_span_controls(study=study, include_excluded=options.get("excluded") == "keep")
    _add_context_probes(report, study, options)
    if report["control"] is None or not report["control"].get("n_checks"):
        report["notes"].append("no control item with an injected error has been answered yet")
    return report


def _add_context_probes(report: dict, study: Any, options: dict[str, Any]) -> None:
    """``context_probes``: the context-use block of a study with probes (absent otherwise, as from an export file,
    which does not say which control copies are probes)."""
    block = study_context_probes(study=study, include_excluded=options.get("excluded") == "keep")
    if block is not None:
        report["context_probes"] = block


def _unit_lengths(study: Any) -> dict[str, int]:
    """Text length of every (item, system) candidate, for the unitized alpha ("item|system" keys)."""
    rows = Candidate.objects.filter(item__study=study).values_list("item__external_id", "system", "text")
    return {f"{ext}|{system}": len(text) for ext, system, text in rows.iterator(chunk_size=5000)}


# ---------------------------------------------------------------- options from a query string
def report_options(params: Any) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Report options from query parameters (``ties``, ``spam``, ``excluded``, ``pilot``, ``weights``, ``seed``,
    ``bootstrap``, and ``ranking_order`` raw|z for score protocols).

    Returns ``(options, errors)``; ``errors`` maps each bad parameter to a
    message and is empty when every value is usable.  Absent or blank
    parameters take the command's defaults, so a bare URL and a bare
    ``agreement SLUG`` give the same report.
    """
    options: dict[str, Any] = {**DEFAULT_POLICIES, "weights": "identity", "seed": 0, "n_boot": 1000}
    errors: dict[str, list[str]] = {}
    for name, choices in {**POLICY_CHOICES, "weights": WEIGHT_SCHEMES}.items():
        value = (params.get(name) or "").strip()
        if not value:
            continue
        if value not in choices:
            errors[name] = [f"{value!r} is not one of {', '.join(choices)}."]
        else:
            options[name] = value
    order = (params.get("ranking_order") or "").strip()
    if order:
        if order not in ("raw", "z"):
            errors["ranking_order"] = [f"{order!r} is not one of raw, z."]
        else:
            options["ranking_order"] = order
    for name, key, low, high in (("seed", "seed", 0, 2**32 - 1), ("bootstrap", "n_boot", 1, 100_000)):
        value = (params.get(name) or "").strip()
        if not value:
            continue
        try:
            number = int(value)
        except ValueError:
            errors[name] = [f"{value!r} is not a whole number."]
            continue
        if not low <= number <= high:
            errors[name] = [f"Must be between {low} and {high}."]
        else:
            options[key] = number
    return options, errors


def study_ratings(study: Any, *, ties: str = "keep", spam: str = "drop", excluded: str = "drop", pilot: str = "drop",
                  ranking_coding: str = "system", **_: Any) -> pd.DataFrame:
    """The long ratings table the report's main agreement block is computed on.

    Columns ``item`` (the unit), ``rater``, ``label``, ``phenomenon``:
    ``agreement --ratings`` on it with ``--item item --rater rater --label label``
    gives the report's top-level coefficients again.
    """
    _check_policies({"ties": ties, "spam": spam, "excluded": excluded, "pilot": pilot,
                     "ranking_coding": ranking_coding})
    frame = pilot_policy(stats_frame(study_export_frame(study), source=f"study {study.slug}")[0], pilot)[0]
    return frame_ratings(frame, study.protocol, uses_spans=study.uses_spans, ties=ties, spam=spam, excluded=excluded,
                         ranking_coding=ranking_coding)


def frame_ratings(frame: pd.DataFrame, protocol: str, *, uses_spans: bool, ties: str = "keep", spam: str = "drop",
                  excluded: str = "drop", ranking_coding: str = "system") -> pd.DataFrame:
    """:func:`study_ratings` of a stats frame (pilot policy applied already): the report's agreement units,
    columns ``item`` (the unit), ``rater``, ``label``, ``phenomenon``."""
    if frame.empty:
        return pd.DataFrame(columns=["item", "rater", "label", "phenomenon"])
    if _spec(protocol).per_candidate_annotations:
        # The span report's units: item|system, the worst severity marked (or the score band for DA).
        try:
            ratings = sr.span_ratings(frame)
        except ValueError as exc:
            raise ReportError(str(exc)) from None
        if excluded == "drop":
            ratings = ratings[~ratings["excluded"].astype(bool)]
        if spam == "drop":
            ratings = ratings[~ratings["is_spam_item"].astype(bool)]
        return sr.agreement_ratings(ratings, protocol, uses_spans)[["item", "rater", "label", "phenomenon"]]
    ratings = _ratings(frame, protocol, ties=ties, spam=spam, excluded=excluded, ranking_coding=ranking_coding)[0]
    return ratings[["item", "rater", "label", "phenomenon"]]


def frame_ranking(frame: pd.DataFrame, protocol: str, *, uses_spans: bool, spam: str = "drop", excluded: str = "drop",
                  ranking_coding: str = "system", seed: int = 0, n_boot: int = 1000,
                  mqm_weights: dict[str, Any] | None = None, ranking_order: str = "raw", **_: Any) -> dict | None:
    """The ``ranking`` block the report computes, on any stats frame (pilot policy applied already): the same
    procedure whoever answered (an LLM judge's answers, evaluators/reports/judges.py); None without one."""
    notes: list[str] = []
    spec = _spec(protocol)
    if spec.per_candidate_annotations:
        try:
            ratings = sr.span_ratings(frame)
        except ValueError as exc:
            raise ReportError(str(exc)) from None
        if excluded == "drop":
            ratings = ratings[~ratings["excluded"].astype(bool)]
        real = ratings[~ratings["is_spam_item"].astype(bool)]
        if real.empty:
            return None
        scheme = sr.weights_from(mqm_weights)
        references = set(real.loc[real["is_reference"].astype(bool), "system"])
        return sr.ranking_block(sr.segment_scores(real, protocol, scheme), protocol, scheme, references=references,
                                seed=seed, n_boot=n_boot, order=ranking_order)
    keep = _convert(frame, protocol, ties="keep", spam=spam, excluded=excluded, ranking_coding=ranking_coding)[0]
    pairs = spec.pairs_from_ratings(keep, spam=spam, ranking_coding=ranking_coding)
    if pairs is None:
        pairs = _pairs(frame, protocol, excluded=excluded)
    return _ranking(pairs, protocol, seed=seed, n_boot=n_boot, notes=notes)
