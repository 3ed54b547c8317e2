"""LLM judges beside the annotators: may one replace an annotator, how it agrees with each, how it ranks the systems.

For every judge stored with ``import_judge`` (evaluators/judges/), overall and per phenomenon (the items'
``phenomenon`` tags, as the report splits agreement):

* the **alternative annotator test** (Calderon, Reichart & Dror, ACL 2025; evaluators/stats/alt_test.py) with
  the authors' defaults, on what :func:`alt_test_labels` reads as one label per instance — the command
  ``alt_test --slug SLUG --pilot drop [--phenomenon P]`` gives the same numbers;
* **Cohen's kappa** of the judge with each annotator, beside each annotator's mean kappa with the other
  annotators, on the report's agreement units and coding (``study_stats.frame_ratings``,
  ``evaluators.stats.coefficients.pairwise_kappas``) under the report's policies;
* the judge's **system ranking** by the report's own procedure (``study_stats.frame_ranking``) beside the
  humans', with Kendall's tau between the two orders.

Every sentence of the methods paragraph (:func:`methods_paragraph`) is written from the judge's recorded facts
(file, date, answers) and these numbers. Pure given the frames; :func:`judges_report` reads the database.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
from scipy.stats import kendalltau

from evaluators.judges.rows import judge_rater, judge_rows, study_judges
from evaluators.models import LLMJudge
from evaluators.reports import span_report as sr
from evaluators.reports.study_stats import (NO_PHENOMENON, REPORT_COLUMNS, ReportError, frame_ranking,
                                            frame_ratings, pilot_policy, stats_frame, study_export_frame)
from evaluators.reports.svg import KAPPA_MIN_SHARED
from evaluators.stats.alt_test import (EPSILON, MIN_HUMANS_PER_INSTANCE, MIN_INSTANCES_PER_HUMAN, PASS_WINNING_RATE,
                                       Q, AltTestError, AltTestResult, alt_test, finite_or_none)
from evaluators.stats.coding import code_long, weight_matrix
from evaluators.stats.coefficients import pairwise_kappas
from protocols.registry import protocol_named

#: What a study's label is, by its answer column: judgment labels and choices are categories (accuracy),
#: 0–100 scores numbers (neg_rmse); an instance is an item, or an item's candidate where each gets a score.
#: Other protocols (rankings, MQM spans) are read as the report's agreement units (accuracy).
STUDY_LABELS = {"label": "accuracy", "choice": "accuracy", "score": "neg_rmse"}
#: What an instance of the alt-test is, by the same key ("units" otherwise).
INSTANCE_WORDS = {"label": "items", "choice": "items", "score": "candidates (item and system)"}


def _flag(frame: pd.DataFrame, column: str) -> pd.Series:
    if column not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame[column].fillna(False).astype(bool)


#: The policies of the alt-test's agreement units (spam and excluded out, ties a category, pairs by system).
UNIT_POLICY = {"ties": "keep", "spam": "drop", "excluded": "drop", "ranking_coding": "system"}


def alt_test_labels(frame: pd.DataFrame, protocol: str, *, uses_spans: bool, units: pd.DataFrame | None = None
                    ) -> tuple[dict[str, dict[str, Any]], str, dict[str, str]]:
    """One label per rater and instance for the alt-test: ``(rater → instance → label, scoring, instance →
    phenomenon)``, spam items and excluded annotators left out (the pilot policy is the caller's).

    Judgment labels and choices: an instance is an item (``accuracy``); ESA/DA/pairwise scores: an item's
    candidate ``item|system`` with its 0–100 score (``neg_rmse``); any other protocol: the report's agreement
    units (a ranking's candidate pairs, an MQM candidate's worst severity) with their category (``accuracy``);
    ``units``: those units when the caller has them already (``frame_ratings`` of ``frame`` with
    :data:`UNIT_POLICY`).
    """
    column = protocol_named(protocol).answer_column
    frame = frame[~_flag(frame, "is_spam_item") & ~_flag(frame, "excluded")]
    labels: dict[str, dict[str, Any]] = {}
    phenomena: dict[str, str] = {}
    if column in STUDY_LABELS:
        per_candidate = column == "score"
        for row in frame.itertuples(index=False):
            value = getattr(row, column)
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            instance = f"{row.item}|{row.system}" if per_candidate else str(row.item)
            labels.setdefault(str(row.annotator), {})[instance] = value if per_candidate else str(value)
            phenomena[instance] = str(row.phenomenon)
        return labels, STUDY_LABELS[column], phenomena
    if units is None:
        units = frame_ratings(frame, protocol, uses_spans=uses_spans, **UNIT_POLICY)
    for unit, rater, label, phenomenon in units.itertuples(index=False, name=None):
        labels.setdefault(str(rater), {})[str(unit)] = str(label)
        phenomena[str(unit)] = str(phenomenon)
    return labels, "accuracy", phenomena


def result_json(name: str, result: AltTestResult) -> dict[str, Any]:
    """One judge's alt-test as ``alt_test --json`` prints it."""
    return {"judge": name, "winning_rate": result.winning_rate,
            "advantage_probability": result.advantage_probability, "passed": result.passed,
            "per_annotator": [{"annotator": str(a.annotator), "instances": a.instances,
                               "p_value": finite_or_none(a.p_value), "rejected": a.rejected,
                               "advantage_probability": a.advantage_probability} for a in result.per_annotator],
            "dropped_annotators": [{"annotator": str(a), "instances": n} for a, n in result.dropped_annotators],
            "dropped_instances": len(result.dropped_instances)}


def _only(labels: Mapping[str, Any], phenomena: Mapping[str, str], phenomenon: str | None) -> dict[str, Any]:
    return dict(labels) if phenomenon is None else {i: v for i, v in labels.items() if phenomena.get(i) == phenomenon}


def _of_phenomenon(humans: dict[str, dict[str, Any]], phenomena: Mapping[str, str],
                   phenomenon: str) -> dict[str, dict[str, Any]]:
    """The annotators' labels of one phenomenon's instances; annotators without any are not part of it."""
    kept = {h: _only(labels, phenomena, phenomenon) for h, labels in humans.items()}
    return {h: labels for h, labels in kept.items() if labels}


def _alt_test(name: str, judge: dict[str, Any], humans: dict[str, dict[str, Any]], scoring: str) -> dict[str, Any]:
    """The alt-test with the authors' defaults, or why it cannot run (``error``)."""
    try:
        return result_json(name, alt_test(judge, humans, scoring=scoring))
    except AltTestError as exc:
        return {"judge": name, "error": str(exc)}


def _kappas(ratings: pd.DataFrame, weights: str, span: bool) -> list[dict[str, Any]]:
    """Cohen's kappa of every pair of raters (annotators and judges) on the units both rated, one coding."""
    if ratings.empty:
        return []
    categories = sr.category_order(ratings["label"]) if span else None
    coded = code_long(ratings, item="item", rater="rater", label="label", categories=categories, duplicates="error")
    return pairwise_kappas(coded, weight_matrix(coded.categories, weights))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _usable(pair: dict[str, Any]) -> bool:
    return pair.get("value") is not None and int(pair.get("n") or 0) >= KAPPA_MIN_SHARED


def _agreement(pairs: list[dict[str, Any]], judge: str, annotators: list[str]) -> dict[str, Any]:
    """The judge's kappa with each annotator beside that annotator's mean kappa with the other annotators."""
    humans = set(annotators)
    with_judge: dict[str, dict[str, Any]] = {}
    among: dict[str, list[float]] = {a: [] for a in annotators}
    between: list[float] = []
    for p in pairs:
        a, b = p["rater_a"], p["rater_b"]
        if judge in (a, b) and (a in humans or b in humans):
            with_judge[b if a == judge else a] = p
        elif a in humans and b in humans and _usable(p):
            among[a].append(p["value"])
            among[b].append(p["value"])
            between.append(p["value"])
    rows: list[dict[str, Any]] = []
    for annotator in annotators:
        p = with_judge.get(annotator, {})
        rows.append({"annotator": annotator, "n": int(p.get("n") or 0), "kappa": p.get("value"),
                     "usable": bool(p) and _usable(p), "note": p.get("note"),
                     "mean_kappa_with_annotators": _mean(among[annotator]),
                     "n_annotator_pairs": len(among[annotator])})
    usable = [float(r["kappa"]) for r in rows if r["usable"]]
    return {"per_annotator": rows, "mean_kappa_with_judge": _mean(usable), "n_judge_pairs": len(usable),
            "mean_kappa_between_annotators": _mean(between), "n_annotator_pairs": len(between),
            "min_shared_units": KAPPA_MIN_SHARED}


def _ranking_beside(human: dict[str, Any] | None, judge: dict[str, Any] | None) -> dict[str, Any] | None:
    """The judge's positions beside the humans', and Kendall's tau between the two orders (shared systems)."""
    if judge is None:
        return None
    human_pos = {str(r["system"]): r["position"] for r in (human or {}).get("systems") or []}
    rows = [{"system": str(r["system"]), "position": r["position"], "rank_range": r.get("rank_range"),
             "human_position": human_pos.get(str(r["system"]))} for r in judge["systems"]]
    shared = [r for r in rows if r["human_position"] is not None]
    tau = None
    if len(shared) >= 2:
        value = kendalltau([r["position"] for r in shared], [r["human_position"] for r in shared]).statistic
        tau = finite_or_none(float(value))
    order = {s: k for k, s in enumerate(human_pos)}
    rows.sort(key=lambda r: (order.get(r["system"], len(order)), r["position"]))
    return {"systems": rows, "kendall_tau": tau, "n_shared_systems": len(shared), "method": judge.get("method")}


def judge_facts(judge: LLMJudge, judge_frame: pd.DataFrame, n_real_items: int) -> dict[str, Any]:
    """What is recorded about a judge: the import (file, format, SHA-256, date, who) and what it answered."""
    mine = judge_frame[judge_frame["annotator"] == judge_rater(judge.name)]
    real = mine[~_flag(mine, "is_spam_item")]
    return {"pk": judge.pk, "name": judge.name, "description": judge.description, "file_name": judge.file_name,
            "file_format": judge.file_format, "sha256": judge.sha256, "imported_at": judge.imported_at.isoformat(),
            "imported_by": judge.imported_by, "n_answers": judge.n_answers,
            "n_real_items_answered": int(real["item"].nunique()), "n_real_items": n_real_items}


def _phenomena(frame: pd.DataFrame) -> list[str]:
    names = sorted(set(frame["phenomenon"])) if len(frame) else []
    return [] if names in ([], [NO_PHENOMENON]) else names


def judges_block(*, study: Any, judges: list[LLMJudge], human_frame: pd.DataFrame, judge_frame: pd.DataFrame,
                 human_ranking: dict[str, Any] | None, options: dict[str, Any]) -> dict[str, Any]:
    """The judges' block of the report and compare pages (module docstring), from the stats frames."""
    protocol, uses_spans = study.protocol, study.uses_spans
    span = protocol_named(protocol).per_candidate_annotations
    tested = pilot_policy(human_frame, "drop")[0]
    # Agreement and ranking follow the report's policies (ties, spam, excluded, pilot, weights, coding); with the
    # defaults they are the alt-test's units too, converted once.
    policy = {k: options.get(k, v) for k, v in UNIT_POLICY.items()}
    same = policy == UNIT_POLICY
    people = pilot_policy(human_frame, options.get("pilot", "drop"))[0]
    human_units = frame_ratings(people, protocol, uses_spans=uses_spans, **policy)
    judge_units = frame_ratings(judge_frame, protocol, uses_spans=uses_spans, **policy)
    reuse = same and options.get("pilot", "drop") == "drop"
    humans, scoring, phen_of = alt_test_labels(tested, protocol, uses_spans=uses_spans,
                                               units=human_units if reuse else None)
    judged, _, judge_phen = alt_test_labels(judge_frame, protocol, uses_spans=uses_spans,
                                            units=judge_units if same else None)
    phenomena = _phenomena(tested)
    humans_of = {p: _of_phenomenon(humans, phen_of, p) for p in phenomena}
    ratings = pd.concat([human_units, judge_units], ignore_index=True)
    weights = options.get("weights", "identity")
    annotators = sorted({str(r) for r in ratings["rater"]} - {judge_rater(j.name) for j in judges})
    pairs: dict[str | None, list[dict[str, Any]]] = {None: _kappas(ratings, weights, span)}
    for name in phenomena:
        pairs[name] = _kappas(ratings[ratings["phenomenon"] == name], weights, span)
    n_real_items = int(study.items.filter(is_spam=False).count())
    column = protocol_named(protocol).answer_column
    settings = {"scoring": scoring, "epsilon": EPSILON, "q": Q, "min_annotators_per_instance": MIN_HUMANS_PER_INSTANCE,
                "min_instances_per_annotator": MIN_INSTANCES_PER_HUMAN, "pass_winning_rate": PASS_WINNING_RATE,
                "instances": INSTANCE_WORDS.get(column, "agreement units"), "pilot": "drop", "spam": "drop",
                "excluded": "drop"}
    out = []
    for judge in judges:
        rater = judge_rater(judge.name)
        own = judged.get(rater, {})
        ranking_options = {k: v for k, v in options.items() if k in ("spam", "excluded", "ranking_coding", "seed",
                                                                      "n_boot", "ranking_order")}
        mine = judge_frame[judge_frame["annotator"] == rater]
        try:
            ranking = frame_ranking(mine, protocol, uses_spans=uses_spans, mqm_weights=study.mqm_weights or None,
                                    **ranking_options)
        except ReportError:
            ranking = None
        block = {
            "name": judge.name, "facts": judge_facts(judge, judge_frame, n_real_items),
            "alt_test": _alt_test(judge.name, own, humans, scoring),
            "alt_test_by_phenomenon": {p: _alt_test(judge.name, _only(own, judge_phen, p), humans_of[p], scoring)
                                       for p in phenomena},
            "agreement": _agreement(pairs[None], rater, annotators),
            "agreement_by_phenomenon": {p: _agreement(pairs[p], rater, annotators) for p in phenomena},
            "ranking": _ranking_beside(human_ranking, ranking),
        }
        block["methods"] = methods_paragraph(block, settings, n_annotators=len(humans))
        out.append(block)
    return {"study": study.slug, "settings": settings, "phenomena": phenomena, "n_annotators": len(humans),
            "weights": weights, "command": f"python manage.py alt_test --slug {study.slug} --pilot drop --json",
            "judges": out}


def judges_report(study: Any, *, options: dict[str, Any], human_ranking: dict[str, Any] | None) -> dict[str, Any] | None:
    """:func:`judges_block` of a stored study (None when it has no judge): a constant number of queries."""
    judges = study_judges(study)
    if not judges:
        return None
    human_frame, _, _ = stats_frame(study_export_frame(study), source=f"study {study.slug}")
    rows = pd.DataFrame.from_records(list(judge_rows(study, judges)), columns=list(REPORT_COLUMNS))
    judge_frame, _, _ = stats_frame(rows, source=f"study {study.slug} (judges)")
    return judges_block(study=study, judges=judges, human_frame=human_frame, judge_frame=judge_frame,
                        human_ranking=human_ranking, options=options)


def _num(value: float | None, digits: int = 2) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def methods_paragraph(block: dict[str, Any], settings: dict[str, Any], *, n_annotators: int) -> str:
    """A methods paragraph about one judge, written only from its recorded facts and the block's numbers."""
    f = block["facts"]
    what = f" ({f['description']})" if f["description"] else ""
    parts = [f"The LLM judge {f['name']}{what} answered {f['n_real_items_answered']} of the study's "
             f"{f['n_real_items']} items; its {f['n_answers']} answers were imported on {f['imported_at'][:10]} from "
             f"{f['file_name']} (SHA-256 {f['sha256'][:12]}…), checked as an annotator's answers are, and kept apart "
             f"from the annotators: it was never shown to them and never counted as one."]
    test = block["alt_test"]
    if "error" in test:
        parts.append(f"The alternative annotator test (Calderon et al., 2025) could not be run: {test['error']}.")
    else:
        won = sum(a["rejected"] for a in test["per_annotator"])
        tested = len(test["per_annotator"])
        dropped = test["dropped_annotators"]
        left = (f"; {len(dropped)} annotator(s) with fewer than {settings['min_instances_per_annotator']} instances "
                f"were left out") if dropped else ""
        verdict = "passes" if test["passed"] else "does not pass"
        parts.append(
            f"Following the alternative annotator test (Calderon et al., 2025: leave one annotator out, "
            f"{settings['scoring']} alignment on {settings['instances']}, one-sided t-tests against "
            f"ε = {settings['epsilon']:g}, Benjamini–Yekutieli at q = {settings['q']:g}), the judge won against "
            f"{won} of the {tested} annotators tested{left} (winning rate ω = {test['winning_rate']:.2f}, advantage "
            f"probability ρ = {test['advantage_probability']:.2f}), so it {verdict} the test "
            f"(ω ≥ {settings['pass_winning_rate']:g}).")
    agreement = block["agreement"]
    if agreement["n_judge_pairs"]:
        among = (f", against {_num(agreement['mean_kappa_between_annotators'])} between annotators "
                 f"({agreement['n_annotator_pairs']} pairs)") if agreement["n_annotator_pairs"] else ""
        parts.append(f"Its mean Cohen's κ with the annotators was {_num(agreement['mean_kappa_with_judge'])} "
                     f"({agreement['n_judge_pairs']} of {n_annotators} annotators sharing at least "
                     f"{agreement['min_shared_units']} units with it){among}.")
    ranking = block["ranking"]
    if ranking and ranking["kendall_tau"] is not None:
        parts.append(f"Its system ranking, by the report's procedure, had Kendall's τ = {ranking['kendall_tau']:.2f} "
                     f"with the human ranking over {ranking['n_shared_systems']} systems.")
    return " ".join(parts)
