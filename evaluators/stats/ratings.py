"""From a judgments table to LONG rating tables (for agreement and ranking).

Why one module of ~490 lines: the four judgment converters share one validation, policy and
filter pipeline (docs/statistics.md); most of the length is that column table and the
docstrings stating what each policy does with ties, spam and invalid answers.

The judgments frame (built by the Django side) has ONE ROW PER
(judgment, candidate): a *judgment* is one annotator's answer to one item
(one screen), a *candidate* is one system output shown on that screen.

=============  ===========  =====================================================
column         dtype        meaning
=============  ===========  =====================================================
judgment       hashable     id of the judgment (annotator x item answer); required
item           hashable     id of the item (source segment / screen); required
annotator      hashable     id of the annotator; required
system         str          system name of the candidate; required; unique per
                            judgment
is_reference   bool         candidate is the human reference (default False)
is_spam_item   bool         the item is a spam/attention-check item (default False)
phenomenon     str / NaN    linguistic phenomenon of the item (optional; carried
                            through to the output when the column exists)
rank           float / NaN  ranking protocol: rank of this candidate, LOWER IS
                            BETTER, equal ranks = tie; NaN = not ranked / other
                            protocol
choice         str / NaN    choice protocol: the chosen system name, or 'tie',
                            'neither', 'invalid' (case-insensitive); the same
                            value is repeated on every candidate row of the
                            judgment; NaN for other protocols
label          any / NaN    judgment protocol: the label given to this candidate;
                            a list/tuple/set for multi-label answers; NaN/blank =
                            missing
excluded       bool         the annotator is excluded (default False)
=============  ===========  =====================================================

Every converter returns ``(ratings, policies)``.  ``ratings`` always has
the columns ``item`` (the *unit* of agreement), ``rater`` and ``label``,
plus ``phenomenon`` when the input has it, plus ``judgment`` and
``source_item`` (the original item id; the bootstrap unit of
:mod:`evaluators.stats.ranking`).  Pair tables additionally carry
``system_a`` < ``system_b`` (sorted system names, never screen order).

``policies`` records what was applied and how much was removed::

    {"protocol": "ranking", "ties": "keep", "spam": "drop", "excluded": "drop", ...,
     "n_rows_in": int, "n_judgments_in": int, "n_judgments_used": int, "n_units_out": int,
     "dropped_judgments": {"excluded_annotator": int, "spam_item": int, ...},
     "dropped_units": {"tie": int, "missing_rank": int, ...}}

Filters are applied in this order and each judgment is counted once, under
the first reason that removes it: excluded annotator, spam item, invalid /
missing / unknown answer.  Then ties (counted in output units).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from evaluators.stats.coding import is_missing_label

__all__ = [
    "JUDGMENT_COLUMNS",
    "TIE",
    "NEITHER",
    "INVALID",
    "EMPTY_MULTILABEL",
    "MULTILABEL_SEPARATOR",
    "validate_judgments",
    "ranking_to_pairs",
    "choice_to_labels",
    "choice_to_pairs",
    "judgment_to_labels",
    "multilabel_category",
]

JUDGMENT_COLUMNS: dict[str, str] = {
    "judgment": "id of one annotator's answer to one item (required)",
    "item": "item id (required)",
    "annotator": "annotator id (required)",
    "system": "candidate's system name (required, unique within a judgment)",
    "is_reference": "bool, candidate is the human reference (default False)",
    "is_spam_item": "bool, the item is a spam/attention-check item (default False)",
    "phenomenon": "optional str, carried through",
    "rank": "float, ranking protocol, lower is better, equal = tie, NaN = unranked",
    "choice": "str, choice protocol: system name | 'tie' | 'neither' | 'invalid'",
    "label": "judgment protocol label; list/tuple/set for multi-label; NaN = missing",
    "excluded": "bool, annotator excluded (default False)",
}
REQUIRED = ("judgment", "item", "annotator", "system")

TIE = "tie"
NEITHER = "neither"
INVALID = "invalid"
SPECIAL_CHOICES = (TIE, NEITHER, INVALID)
#: category used for a multi-label answer with nothing selected
EMPTY_MULTILABEL = "none"
MULTILABEL_SEPARATOR = "+"

_DROP_KEEP = ("drop", "keep")


def _check(name: str, value: str, allowed: Iterable[str]) -> None:
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def _bool_col(df: pd.DataFrame, col: str) -> pd.Series:
    if col not in df.columns:
        return pd.Series(False, index=df.index)
    return df[col].fillna(False).astype(bool)


def validate_judgments(df: pd.DataFrame) -> pd.DataFrame:
    """Check the judgments schema and return a normalised copy.

    Adds missing optional boolean columns as False, casts ``system`` to str,
    and raises ``ValueError`` for missing required columns, missing ids,
    a system listed twice in one judgment, or a system named like a special
    answer ('tie', 'neither', 'invalid').
    """
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(f"judgments table lacks required columns {missing}; schema: {list(JUDGMENT_COLUMNS)}")
    out = df.copy()
    if out[list(REQUIRED)].isna().any().any():
        raise ValueError("judgment, item, annotator and system must not be missing")
    out["system"] = out["system"].astype(str)
    for col in ("is_reference", "is_spam_item", "excluded"):
        out[col] = _bool_col(out, col)
    dup = out.duplicated(["judgment", "system"], keep=False)
    if dup.any():
        ex = out.loc[dup, ["judgment", "system"]].head(3).to_dict("records")
        raise ValueError(f"a system appears twice in one judgment, e.g. {ex}")
    bad = sorted(set(out["system"].str.strip().str.lower()) & set(SPECIAL_CHOICES))
    if bad:
        raise ValueError(f"system names {bad} clash with special answers {SPECIAL_CHOICES}")
    return out


def _new_policies(protocol: str, df: pd.DataFrame, **applied: str) -> dict:
    return {
        "protocol": protocol,
        **applied,
        "n_rows_in": int(len(df)),
        "n_judgments_in": int(df["judgment"].nunique()),
        "n_judgments_used": 0,
        "n_units_out": 0,
        "dropped_judgments": {},
        "dropped_units": {},
    }


def _drop_judgments(df: pd.DataFrame, mask_rows: pd.Series, reason: str, policies: dict) -> pd.DataFrame:
    """Drop every judgment having at least one row in ``mask_rows``."""
    bad = df.loc[mask_rows, "judgment"].unique()
    policies["dropped_judgments"][reason] = policies["dropped_judgments"].get(reason, 0) + int(len(bad))
    if len(bad) == 0:
        return df
    return df[~df["judgment"].isin(bad)]


def _base_filter(df: pd.DataFrame, *, spam: str, excluded: str, policies: dict) -> pd.DataFrame:
    _check("spam", spam, _DROP_KEEP)
    _check("excluded", excluded, _DROP_KEEP)
    if excluded == "drop":
        df = _drop_judgments(df, df["excluded"], "excluded_annotator", policies)
    if spam == "drop":
        df = _drop_judgments(df, df["is_spam_item"], "spam_item", policies)
    return df


def _start(
    df: pd.DataFrame,
    protocol: str,
    *,
    needs: tuple[str, str] | None = None,
    references_counted_in: str = "dropped_units",
    **applied: str,
) -> tuple[pd.DataFrame, dict]:
    """The common start of every converter: validate, record policies, filter.

    ``applied`` are the converter's policy arguments (``spam`` and
    ``excluded`` always, ``ties``/``references``/``neither`` when it has
    them), recorded in ``policies`` in the order given.  ``needs = (caller,
    column)`` raises when the protocol's answer column is missing.  Excluded
    annotators and spam items are dropped (counted per judgment); with
    ``references="drop"`` reference candidates are removed and counted under
    ``policies[references_counted_in]["reference"]``.
    """
    for name, allowed in (("ties", ("keep", "drop")), ("references", _DROP_KEEP)):
        if name in applied:
            _check(name, applied[name], allowed)
    df = validate_judgments(df)
    if needs is not None and needs[1] not in df.columns:
        raise ValueError(f"{needs[0]} needs a {needs[1]!r} column")
    policies = _new_policies(protocol, df, **applied)
    df = _base_filter(df, spam=applied["spam"], excluded=applied["excluded"], policies=policies)
    if applied.get("references") == "drop":
        policies.setdefault(references_counted_in, {})["reference"] = int(df["is_reference"].sum())
        df = df[~df["is_reference"]]
    return df, policies


def _finish(out: pd.DataFrame, policies: dict, df: pd.DataFrame, *, ties: str | None = None) -> tuple[pd.DataFrame, dict]:
    """The common end: phenomenon, tie policy, column order, output counts.

    ``df`` is the filtered judgments frame; when it has a ``phenomenon``
    column that ``out`` lacks, each unit gets its judgment's phenomenon.
    """
    has_phenomenon = "phenomenon" in df.columns
    if has_phenomenon and "phenomenon" not in out.columns:
        ph = df.groupby("judgment", sort=False)["phenomenon"].first()
        # object dtype also for an empty output (phenomena are strings)
        out["phenomenon"] = out["judgment"].map(ph).to_numpy() if len(out) else pd.Series(dtype=object)
    if ties is not None:
        out = _apply_ties(out, ties, policies)
    cols = ["item", "rater", "label"]
    if has_phenomenon:
        cols.append("phenomenon")
    extra = [c for c in ("judgment", "source_item", "system", "system_a", "system_b") if c in out.columns]
    out = out[cols + extra].reset_index(drop=True)
    policies["n_units_out"] = int(len(out))
    policies["n_judgments_used"] = int(out["judgment"].nunique()) if len(out) else 0
    return out, policies


def _apply_ties(out: pd.DataFrame, ties: str, policies: dict) -> pd.DataFrame:
    is_tie = out["label"] == TIE
    policies["dropped_units"]["tie"] = int(is_tie.sum()) if ties == "drop" else 0
    if ties == "drop":
        out = out[~is_tie]
    return out


# --------------------------------------------------------------------------
def ranking_to_pairs(
    df: pd.DataFrame,
    *,
    ties: str = "keep",
    spam: str = "drop",
    excluded: str = "drop",
    references: str = "keep",
    coding: str = "system",
) -> tuple[pd.DataFrame, dict]:
    """Rankings -> one unit per (item, candidate pair), label = winner or 'tie'.

    Each judgment with m ranked candidates yields the m(m-1)/2 pairs
    ``(system_a, system_b)`` with ``system_a < system_b`` in sorted-name order
    (never screen order); unit id ``f"{item}|{system_a}|{system_b}"``, rater =
    annotator, label = the better-ranked (lower ``rank``) system, or ``'tie'``
    for equal ranks.  This is the pairwise decomposition used for WMT
    relative ranking (Bojar et al. 2016) and for pairwise agreement.

    Ties: ``ties="keep"`` keeps 'tie' as a category; ``"drop"`` removes tie
    units (counted in ``dropped_units["tie"]``).  Missing answers: a candidate
    with NaN ``rank`` forms no pair (lost pairs counted in
    ``dropped_units["missing_rank"]``).  Invalid answers: rankings have none.
    Spam items / excluded annotators are dropped by default; references
    (``is_reference``) are kept as candidates unless ``references="drop"``.

    Coding of the outcome (``coding``): ``"system"`` (default) labels a pair
    by the winning system's name, so a study of k systems has k + 1
    categories; ``"position"`` labels it ``first`` / ``second`` / ``tie`` —
    the pair's first or second system (in sorted-name order) won — three
    categories whatever k, the coding of pairwise-agreement studies that pool
    pairs (e.g. Callison-Burch et al. 2007). Observed agreement is the same;
    chance agreement, hence kappa and AC1, differs.
    """
    if coding not in ("system", "position"):
        raise ValueError(f"ranking coding {coding!r}: one of system, position")
    df, policies = _start(
        df, "ranking", ties=ties, spam=spam, excluded=excluded, references=references,
        references_counted_in="dropped_candidate_rows", needs=("ranking_to_pairs", "rank"),
    )
    rank = pd.to_numeric(df["rank"], errors="coerce")
    df = df.assign(rank=rank)
    # pairs that cannot be formed because of a missing rank
    m_all = df.groupby("judgment", sort=False).size()
    m_ok = df[rank.notna()].groupby("judgment", sort=False).size().reindex(m_all.index, fill_value=0)
    lost = int(((m_all * (m_all - 1)) // 2 - (m_ok * (m_ok - 1)) // 2).sum())
    policies["dropped_units"]["missing_rank"] = lost
    ok = df[rank.notna()]
    jud_without = int((m_ok < 2).sum())
    policies["dropped_judgments"]["fewer_than_two_ranked"] = jud_without

    left = ok[["judgment", "item", "annotator", "system", "rank"]]
    right = ok[["judgment", "system", "rank"]]
    m = left.merge(right, on="judgment", suffixes=("_a", "_b"))
    m = m[m["system_a"] < m["system_b"]]
    ra, rb = m["rank_a"].to_numpy(), m["rank_b"].to_numpy()
    if coding == "position":
        label = np.where(ra < rb, "first", np.where(rb < ra, "second", TIE))
    else:
        label = np.where(ra < rb, m["system_a"].to_numpy(), np.where(rb < ra, m["system_b"].to_numpy(), TIE))
    policies["coding"] = coding
    out = pd.DataFrame(
        {
            "item": m["item"].astype(str) + "|" + m["system_a"] + "|" + m["system_b"],
            "rater": m["annotator"].to_numpy(),
            "label": label,
            "judgment": m["judgment"].to_numpy(),
            "source_item": m["item"].to_numpy(),
            "system_a": m["system_a"].to_numpy(),
            "system_b": m["system_b"].to_numpy(),
        }
    )
    return _finish(out, policies, df, ties=ties)


# --------------------------------------------------------------------------
def _choices(df: pd.DataFrame, policies: dict) -> pd.DataFrame:
    """One row per judgment with a valid normalised choice + candidate set."""
    if "choice" not in df.columns:
        raise ValueError("choice protocol needs a 'choice' column")
    first = df.groupby("judgment", sort=False).agg(
        item=("item", "first"), annotator=("annotator", "first"), choice=("choice", "first")
    )
    # A tuple per group is what pandas returns here; pandas-stubs only allow scalar results of agg.
    cands = df.groupby("judgment", sort=False)["system"].agg(lambda s: tuple(sorted(s)))  # type: ignore[type-var]
    first["candidates"] = cands
    raw = first["choice"]
    missing = raw.map(is_missing_label).astype(bool)
    norm = raw.map(lambda v: v.strip() if isinstance(v, str) else v)
    special = norm.map(lambda v: v.lower() if isinstance(v, str) and v.lower() in SPECIAL_CHOICES else None)
    norm = special.where(special.notna(), norm)
    is_invalid = ~missing & (norm == INVALID)
    known = norm.where(~missing, "").astype(str)
    in_cands = pd.Series([c in cs for c, cs in zip(known, first["candidates"])], index=first.index)
    unknown = ~missing & ~is_invalid & ~norm.isin([TIE, NEITHER]) & ~in_cands
    for reason, mask in (("missing_choice", missing), ("invalid", is_invalid), ("unknown_choice", unknown)):
        policies["dropped_judgments"][reason] = int(mask.sum())
    keep = ~(missing | is_invalid | unknown)
    out = first[keep].copy()
    out["choice"] = norm[keep].astype(str)
    return out


def choice_to_labels(
    df: pd.DataFrame,
    *,
    ties: str = "keep",
    spam: str = "drop",
    excluded: str = "drop",
) -> tuple[pd.DataFrame, dict]:
    """Choices -> one rating per judgment: unit = item, label = chosen system.

    Labels: the chosen system name, ``'tie'`` or ``'neither'`` (a category of
    its own).  Invalid answers (``'invalid'``) are dropped
    (``dropped_judgments["invalid"]``); missing choices and choices naming a
    system that is not a candidate of the judgment are dropped too
    (``missing_choice`` / ``unknown_choice``).  Ties: ``ties="drop"`` removes
    'tie' answers (``dropped_units["tie"]``); 'neither' is never affected.
    Spam items and excluded annotators are dropped by default.  Pairwise
    preference judgments as in Läubli et al. (2018).
    """
    df, policies = _start(df, "choice", ties=ties, spam=spam, excluded=excluded)
    ch = _choices(df, policies)
    out = pd.DataFrame(
        {
            "item": ch["item"].to_numpy(),
            "rater": ch["annotator"].to_numpy(),
            "label": ch["choice"].to_numpy(),
            "judgment": ch.index.to_numpy(),
            "source_item": ch["item"].to_numpy(),
        }
    )
    return _finish(out, policies, df, ties=ties)


def choice_to_pairs(
    df: pd.DataFrame,
    *,
    ties: str = "keep",
    spam: str = "drop",
    excluded: str = "drop",
    neither: str = "tie",
) -> tuple[pd.DataFrame, dict]:
    """Choices -> pairwise outcomes (same layout as :func:`ranking_to_pairs`).

    A choice of X among candidates S gives the pairs (X, Y) for every other
    Y in S, each won by X; pairs between two non-chosen candidates are
    unknown and not emitted.  ``'tie'`` makes every pair of the judgment a
    tie; ``'neither'`` is a tie too (``neither="tie"``, default: no system
    is preferred) or is dropped (``neither="drop"``, counted in
    ``dropped_judgments["neither"]``).  ``'invalid'``/missing/unknown choices
    are dropped as in :func:`choice_to_labels`; ``ties="drop"`` then removes
    tie pairs.  Läubli et al. (2018) pairwise preferences.
    """
    _check("neither", neither, ("tie", "drop"))
    df, policies = _start(df, "choice_pairs", ties=ties, spam=spam, excluded=excluded, neither=neither)
    ch = _choices(df, policies)
    if neither == "drop":
        is_n = ch["choice"] == NEITHER
        policies["dropped_judgments"]["neither"] = int(is_n.sum())
        ch = ch[~is_n]
    rows: dict[str, list] = {k: [] for k in ("judgment", "source_item", "rater", "system_a", "system_b", "label")}
    for jid, item, ann, choice, cands in zip(ch.index, ch["item"], ch["annotator"], ch["choice"], ch["candidates"]):
        for i, a in enumerate(cands):
            for b in cands[i + 1:]:
                if choice in (TIE, NEITHER):
                    lab = TIE
                elif choice == a or choice == b:
                    lab = choice
                else:
                    continue
                rows["judgment"].append(jid)
                rows["source_item"].append(item)
                rows["rater"].append(ann)
                rows["system_a"].append(a)
                rows["system_b"].append(b)
                rows["label"].append(lab)
    out = pd.DataFrame(rows, dtype=object)
    out["item"] = [f"{i}|{a}|{b}" for i, a, b in zip(out["source_item"], out["system_a"], out["system_b"])]
    return _finish(out, policies, df, ties=ties)


# --------------------------------------------------------------------------
def multilabel_category(value: Any) -> Any:
    """One category for a multi-label answer: sorted labels joined by '+'.

    ``["fluency", "accuracy"]`` -> ``"accuracy+fluency"``; an empty selection
    -> ``"none"`` (a real answer: nothing applies).  Scalars pass through.
    Agreement on such categories is exact-set agreement (nominal).
    """
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        parts = sorted({str(v).strip() for v in value if not is_missing_label(v)})
        return MULTILABEL_SEPARATOR.join(parts) if parts else EMPTY_MULTILABEL
    return value


def judgment_to_labels(
    df: pd.DataFrame,
    *,
    spam: str = "drop",
    excluded: str = "drop",
    references: str = "keep",
    unit: str = "auto",
    invalid_labels: Iterable[str] = (INVALID,),
) -> tuple[pd.DataFrame, dict]:
    """Judgment-protocol labels -> ratings, label as given.

    Multi-label answers (list/tuple/set) become ONE category: the labels in
    sorted order joined with ``'+'`` (empty selection -> ``'none'``), see
    :func:`multilabel_category`.  Unit: ``item``; with ``unit="auto"`` it
    becomes ``f"{item}|{system}"`` for every row when any item carries more
    than one judged candidate (``"item"``/``"item_system"`` force either).
    Missing labels are dropped (``dropped_units["missing_label"]``); labels
    in ``invalid_labels`` (case-insensitive, default 'invalid') are dropped
    (``dropped_units["invalid"]``).  There are no ties in this protocol.
    Spam items / excluded annotators dropped by default; reference
    candidates kept unless ``references="drop"``.
    """
    _check("unit", unit, ("auto", "item", "item_system"))
    df, policies = _start(
        df, "judgment", spam=spam, excluded=excluded, references=references,
        needs=("judgment_to_labels", "label"),
    )
    lab = df["label"].map(multilabel_category)
    missing = lab.map(is_missing_label).astype(bool)
    bad = {str(x).strip().lower() for x in invalid_labels}
    invalid = ~missing & lab.map(lambda v: isinstance(v, str) and v.strip().lower() in bad).astype(bool)
    policies["dropped_units"]["missing_label"] = int(missing.sum())
    policies["dropped_units"]["invalid"] = int(invalid.sum())
    keep = ~(missing | invalid)
    d = df[keep].assign(label=lab[keep])
    if unit == "auto":
        multi = bool((d.groupby("item")["system"].nunique() > 1).any()) if len(d) else False
        unit = "item_system" if multi else "item"
    policies["unit"] = "item|system" if unit == "item_system" else "item"
    unit_id = d["item"].astype(str) + "|" + d["system"] if unit == "item_system" else d["item"]
    out = pd.DataFrame(
        {
            "item": unit_id.to_numpy(),
            "rater": d["annotator"].to_numpy(),
            "label": d["label"].to_numpy(),
            "judgment": d["judgment"].to_numpy(),
            "source_item": d["item"].to_numpy(),
            "system": d["system"].to_numpy(),
        }
    )
    if "phenomenon" in d.columns:
        out["phenomenon"] = d["phenomenon"].to_numpy()
    return _finish(out, policies, df)
