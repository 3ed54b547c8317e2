"""The report's ``facts`` block: how the judgments were collected, and what was recorded about it.

The methods paragraph, the report page's "For a paper" box and the paper tables
are written from this block and the report's numbers only (evaluators/reports/paper.py),
so every clause rests on something stored. A fact that was not recorded is ``None``
(JSON ``null``), never a default: an imported MQM file does not say whether its raters
saw system names, in which order they saw the candidates or how long they took, so
for it those facts are ``None`` and the paragraph says they were not recorded.

Two parts:

* :func:`data_facts` — pure, from the report's stats frame: raters per item and per
  document (min/median/max), annotators, excluded annotators, how many judgments
  carry an answer time. ``agreement --judgments FILE`` gets these too.
* :func:`study_facts` — the stored study: where the judgments came from
  (``Study.provenance``, written by ``import_judgments``), the design a study
  collected here had (redundancy, source shown, ties, quality-control settings) and
  what this tool guarantees for it (system names hidden, candidate order shuffled
  per annotator). For an imported study only what the file records is given.

docs/reports.md ("The facts block") lists every field.
"""
from __future__ import annotations

from statistics import median
from typing import Any

import pandas as pd

from studies.models import Candidate
from annotation.quality.probes import probe_items_q
from protocols.registry import protocol_named

#: What a control item is, per protocol kind, in a study collected here (studies/controls/spam.py, studies/controls/error_injection.py).
CONTROL_KINDS = {"pairwise": "scrambled_candidate", "span": "injected_error", "da": "degraded_copy"}


def _spread(counts: list[int]) -> dict[str, Any] | None:
    """``{"min", "median", "max", "n"}`` of per-unit counts; ``None`` when there is no unit."""
    if not counts:
        return None
    mid = median(counts)
    return {"min": int(min(counts)), "median": int(mid) if float(mid).is_integer() else float(mid),
            "max": int(max(counts)), "n": len(counts)}


def _rated(frame: pd.DataFrame) -> pd.Series:
    """Span/score protocols: the rows of candidates a rating was given for (spans or a score; [] = no error)."""
    rated = pd.Series(False, index=frame.index)
    if "spans" in frame.columns:
        rated |= frame["spans"].notna()
    if "score" in frame.columns:
        rated |= frame["score"].notna()
    return rated


def data_facts(frame: pd.DataFrame, *, excluded: str, span: bool = False) -> dict[str, Any]:
    """Raters per segment, item and document, annotators and answer times, from the report's stats frame.

    ``frame`` is :func:`evaluators.reports.study_stats.stats_frame`'s (pilot policy applied). Raters are
    counted on real (non-control) items, without excluded annotators when ``excluded="drop"`` — the
    judgments the report's figures use; for the span and score protocols (``span``) only on the candidates
    a rater rated (in Google's MQM files one rater rates a segment of one system). A segment is one
    (item, candidate): for the ranking, choice and judgment protocols a judgment covers every candidate of
    its item. ``document`` and ``timed`` are optional columns: without them the per-document figure and
    the timing are ``None`` (not recorded).
    """
    real = frame[~frame["is_spam_item"].astype(bool)] if len(frame) else frame
    used = real[~real["excluded"].astype(bool)] if excluded == "drop" and len(real) else real
    if span and len(used):
        used = used[_rated(used)]
    per_item = [int(n) for n in used.groupby("item")["annotator"].nunique()] if len(used) else []
    per_segment = [int(n) for n in used.groupby(["item", "system"])["annotator"].nunique()] if len(used) else []
    per_document = None
    if "document" in used.columns and len(used):
        docs = used[used["document"].notna()]
        if len(docs):
            per_document = _spread([int(n) for n in docs.groupby("document")["annotator"].nunique()])
    annotators = frame.drop_duplicates("annotator") if len(frame) else frame
    timing = None
    if "timed" in frame.columns:
        judgments = frame.drop_duplicates("judgment")
        timing = {"n_judgments": int(len(judgments)), "n_timed": int(judgments["timed"].astype(bool).sum())}
    return {
        "n_annotators": int(len(annotators)),
        "n_excluded": int(annotators["excluded"].astype(bool).sum()) if len(annotators) else 0,
        "raters_per_segment": _spread(per_segment),
        "raters_per_item": _spread(per_item),
        "raters_per_document": per_document,
        "timing": timing,
    }


def _kind(study: Any) -> str:
    return str(study.spec.facts_kind(study.uses_spans))


def _collection(study: Any) -> dict[str, Any]:
    record = study.provenance if isinstance(study.provenance, dict) else {}
    if record.get("how") != "imported":
        return {"how": "native", "format": None, "format_name": None, "file": None, "sha256": None, "source": None,
                "imported_at": None}
    return {"how": "imported", **{key: record.get(key) for key in
                                  ("format", "format_name", "file", "sha256", "source", "imported_at")}}


def _selection(study: Any) -> dict[str, Any] | None:
    """How the items were selected before import (``import_study --select``, the import page), or None."""
    record = study.provenance if isinstance(study.provenance, dict) else {}
    selection = record.get("selection")
    return dict(selection) if isinstance(selection, dict) else None


def _prefill(study: Any) -> dict[str, Any] | None:
    """Suggested error spans (``import_prefill``): their source, file and counts, and the study's settings;
    ``n_clean_items``, ``skip_clean_share`` and ``n_skipped_clean``: the items on which the source marks every
    candidate clean, and how many of them were left out of the hand-out (recorded when ``Item.skipped_clean`` was
    written; 0 for an import recorded before the setting existed)."""
    record = study.provenance.get("prefill") if isinstance(study.provenance, dict) else None
    if not isinstance(record, dict):
        return None
    spec = study.spec
    return {"n_clean_items": None, "skip_clean_share": 0.0, "n_skipped_clean": 0, **record,
            "share": spec.setting(study, "prefill_share")}


def _allocation(study: Any) -> dict[str, Any] | None:
    """How the items were handed out when adaptive (``Study.allocation``), with the record of an automatic close
    when settled (``Study.provenance["closed_when_settled"]``: time, judgments, the target pairs' decisions);
    None for uniform allocation."""
    options = study.allocation if isinstance(study.allocation, dict) else {}
    if options.get("policy") != "adaptive":
        return None
    record = study.provenance if isinstance(study.provenance, dict) else {}
    closed = record.get("closed_when_settled")
    return {**{key: options.get(key) for key in ("policy", "target", "alpha", "min_effect", "warmup",
                                                 "close_when_settled")},
            "closed_when_settled": dict(closed) if isinstance(closed, dict) else None}


def _references_and_systems(study: Any) -> tuple[list[str], list[str]]:
    rows = set(Candidate.objects.filter(item__study=study, item__is_spam=False).values_list("system", "is_reference"))
    return sorted({s for s, _ in rows}), sorted({s for s, is_ref in rows if is_ref})


def _categories(study: Any, native: bool) -> dict[str, Any] | None:
    if not study.uses_spans:
        return None
    # Spans without categories (ESA) have an empty taxonomy.
    names = [str(c["name"]) for c in study.effective_taxonomy()]
    # An imported study's categories and severities are those its file used (annotation/judgment_import_*.py).
    return {"names": names, "severities": list(study.effective_severities()),
            "from": "study settings" if native else "imported file"}


def study_facts(study: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The ``facts`` block of a stored study: :func:`data_facts` (``data``) plus what the study records."""
    collection = _collection(study)
    native = collection["how"] == "native"
    kind = _kind(study)
    systems, references = _references_and_systems(study)
    n_probes = study.items.filter(probe_items_q()).count()
    n_controls = study.items.filter(is_spam=True).count() - n_probes
    timing = data.get("timing")
    if timing is not None:
        timed = bool(timing["n_timed"]) or (native and not timing["n_judgments"])
        timing = {**timing, "min_seconds": study.min_seconds if timed else None}
    order = ("per annotator and document" if study.unit == "document" else "per annotator") if native else None
    return {
        "collection": collection,
        "protocol": study.protocol,
        "kind": kind,
        "unit": study.unit,
        "n_items": study.items.filter(is_spam=False).count(),
        "selection": _selection(study),
        "prefill": _prefill(study),
        "allocation": _allocation(study),
        "systems": systems,
        "references": references,
        **{k: v for k, v in data.items() if k != "timing"},
        "redundancy": study.redundancy if native else None,
        "categories": _categories(study, native),
        "recorded": {
            "blinding": True if native else None,
            "order_randomised": order,
            "source_shown": study.show_source if native else None,
            "ties_allowed": study.allow_ties if native and study.spec.records_ties_allowed() else None,
            "timing": timing,
            "controls": {
                "n_control_items": n_controls,
                "kind": (CONTROL_KINDS[kind] if native or collection["format"] == "export" else "from_file")
                if n_controls else None,
                "spam_rate": study.spam_rate if native else None,
                "auto_exclude_share": study.auto_exclude_share if native else None,
                "n_context_probes": n_probes if native else None,
                "probe_rate": study.probe_rate if native else None,
            },
        },
    }


def file_facts(data: dict[str, Any], *, source: str, protocol: str, frame: pd.DataFrame) -> dict[str, Any]:
    """The ``facts`` block of a report read from an export file: only what the file itself shows."""
    real = frame[~frame["is_spam_item"].astype(bool)] if len(frame) else frame
    n_controls = int(frame.loc[frame["is_spam_item"].astype(bool), "item"].nunique()) if len(frame) else 0
    return {
        "collection": {"how": "file", "format": "export", "format_name": None, "file": source, "sha256": None,
                       "source": None, "imported_at": None},
        "protocol": protocol,
        "kind": protocol_named(protocol).file_facts_kind(),
        "unit": None,
        "n_items": int(real["item"].nunique()) if len(real) else 0,
        "selection": None,
        "allocation": None,
        "systems": sorted(set(real["system"])) if len(real) else [],
        "references": sorted(set(real.loc[real["is_reference"].astype(bool), "system"])) if len(real) else [],
        **{k: v for k, v in data.items() if k != "timing"},
        "redundancy": None,
        "categories": None,
        "recorded": {"blinding": None, "order_randomised": None, "source_shown": None, "ties_allowed": None,
                     "timing": data.get("timing"),
                     "controls": {"n_control_items": n_controls, "kind": None, "spam_rate": None,
                                  "auto_exclude_share": None}},
    }


# ---------------------------------------------------------------- clauses of the methods paragraph
# Each function below turns one part of the facts block into words; a fact that is None gives no claim.
def how(facts: dict) -> str:
    """``native``, ``imported`` or ``file``; ``unknown`` for a report without facts (one cached before they existed)."""
    return str(((facts or {}).get("collection") or {}).get("how") or "unknown")


def opening_sentence(facts: dict, product: str, version: str) -> str:
    """Who collected the judgments: this tool, or elsewhere (the imported file, its format and source)."""
    collection = facts.get("collection") or {}
    mode = how(facts)
    if mode == "native":
        return f"We collected human judgments with {product} (version {version})."
    if mode == "unknown":
        return f"The judgments were analysed with {product} (version {version}); how they were collected is not recorded."
    file = collection.get("file") or "a file"
    fmt = collection.get("format_name") or collection.get("format")
    in_format = f", in {fmt}" if fmt else ""
    if mode == "imported":
        lead = f"The judgments were not collected with {product} (version {version}) but imported into it"
        if collection.get("source"):
            return f"{lead}: they come from {collection['source']} (the file {file}{in_format})."
        return f"{lead} from the file {file}{in_format}; where the file came from was not recorded."
    return f"The judgments were read from the file {file}{in_format} with {product} (version {version})."


def display_clauses(facts: dict) -> list[str]:
    """What annotators were shown, as recorded: source, blinding, candidate order, ties (empty when unknown)."""
    recorded = facts.get("recorded") or {}
    out = []
    if recorded.get("source_shown") is True:
        out.append("shown with the source text")
    elif recorded.get("source_shown") is False:
        out.append("shown monolingually, without the source")
    if recorded.get("blinding") is True:
        out.append("system names hidden")
    if recorded.get("order_randomised"):
        out.append(f"candidate order randomised {recorded['order_randomised']}")
    if recorded.get("ties_allowed") is True:
        out.append("ties allowed")
    return out


def not_recorded_sentence(facts: dict) -> str:
    """The display facts the study does not record, said as such ("" when every one is known)."""
    recorded = facts.get("recorded") or {}
    missing = [words for key, words in (("blinding", "whether system names were hidden from the annotators"),
                                         ("order_randomised", "in which order the candidates were shown"),
                                         ("source_shown", "whether the source text was shown"))
               if recorded.get(key) is None]
    if not missing:
        return ""
    listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " or " + missing[-1]
    return f"Not recorded: {listed}."


def _spread_words(spread: dict, noun: str = "annotator") -> str:
    if spread["min"] == spread["max"]:
        return f"{spread['min']} {noun}{'s' if spread['min'] != 1 else ''}"
    return f"{spread['median']} {noun}{'s' if spread['median'] != 1 else ''} (median; {spread['min']}–{spread['max']})"


def _same(a: dict, b: dict) -> bool:
    return (a["min"], a["median"], a["max"]) == (b["min"], b["median"], b["max"])


def raters_clause(facts: dict, n_judgments: int, *, segments: bool = False) -> str:
    """"each segment was rated by …, each item by …, each document by …, N annotators in all, giving M judgments".

    ``segments``: span and score studies, whose raters may rate some of an item's candidates only, start
    from the segment (item × candidate); a coarser level is named only where its figures differ.
    """
    levels = [("segment (item × candidate)", facts.get("raters_per_segment"))] if segments else []
    levels += [("item", facts.get("raters_per_item")), ("document", facts.get("raters_per_document"))]
    n_annotators = int(facts.get("n_annotators") or 0)
    per_item = facts.get("raters_per_item")
    redundancy = facts.get("redundancy")
    asked = (f" (the study asks for {redundancy} per item)" if redundancy is not None and (
        per_item is None or per_item["min"] != redundancy or per_item["max"] != redundancy) else "")
    said: list[str] = []
    last: dict | None = None
    for noun, spread in levels:
        if spread is None or (last is not None and _same(spread, last)):
            continue
        verb = ("was rated " if segments else "was judged ") if not said else ""
        said.append(f"each {noun} {verb}by {_spread_words(spread)}" + (asked if noun == "item" else ""))
        last = spread
    if not said:
        words = "no item has been judged yet" + asked
    else:
        words = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
        if asked and asked not in words:  # the item level was not named (the same figures as the segment's)
            words += asked
    return (f"{words}, {n_annotators} annotator{'s' if n_annotators != 1 else ''} in all, giving {n_judgments} "
            f"judgment{'s' if n_judgments != 1 else ''}")


def systems_clause(facts: dict) -> str:
    """"N items and K candidate systems including the human reference(s) …"."""
    systems, references = facts.get("systems") or [], facts.get("references") or []
    words = f"{facts.get('n_items', 0)} items and {len(systems)} candidate systems"
    if references:
        plural = "s" if len(references) > 1 else ""
        hidden = " as a hidden control" if (facts.get("recorded") or {}).get("blinding") is True else ""
        words += f" including the human reference{plural} {', '.join(references)}{hidden}"
    return words


SELECTION_WORDS = {
    "metric_avg": "the items with the lowest mean score over the systems first",
    "metric_var": "the items on which the systems' scores vary most first",
    "metric_cons": "the items whose ranking of the systems agrees most with the ranking over all items first",
}
SIMILARITY_WORDS = {"unigram": "unigram overlap", "bleu": "sentence BLEU", "chrf": "chrF"}


def selection_sentence(facts: dict) -> str:
    """How the items were selected from a larger study file, as recorded ("" when nothing was selected)."""
    selection = facts.get("selection")
    if not selection:
        return ""
    lead = f"The {selection['n_kept']} items were selected from {selection['n_total']}"
    method = str(selection.get("method"))
    cite = f" ({selection.get('source') or 'subset2evaluate; Zouhar et al., 2025'})"
    if method == "random":
        return f"{lead} at random (seed {selection.get('seed')}){cite}."
    if method == "diversity":
        similarity = SIMILARITY_WORDS.get(str(selection.get("similarity")), selection.get("similarity"))
        return f"{lead} by diversity{cite}: the items whose candidates' texts are least alike ({similarity}) first."
    scores = selection.get("scores") or {}
    metric = selection.get("metric")
    if scores.get("source") == "computed":
        where = " of the candidates against each item's reference (sacrebleu, sentence level, computed at import)"
    elif scores.get("file"):
        where = f" from the file {scores['file']}"
    else:
        where = ""
    order = SELECTION_WORDS.get(method)
    return f"{lead} by {method} on {metric} scores{where}{cite}" + (f": {order}." if order else ".")


DECISION_WORDS = {"first better": "{a} better than {b}", "second better": "{b} better than {a}",
                  "indistinguishable": "{a} and {b} indistinguishable", "open": "{a} and {b} undecided"}


def _pair_words(pair: dict) -> str:
    words = DECISION_WORDS.get(str(pair.get("decision")), "{a} and {b}: " + str(pair.get("decision")))
    words = words.format(a=pair.get("a"), b=pair.get("b"))
    figures = [f"{pair['observations']} observations"] if pair.get("observations") is not None else []
    if pair.get("mean") is not None:
        figures.append(f"mean difference {pair['mean']:g}")
    if pair.get("low") is not None and pair.get("high") is not None:
        figures.append(f"interval [{pair['low']:g}, {pair['high']:g}]")
    return words + (f" ({', '.join(figures)})" if figures else "")


def allocation_sentence(facts: dict) -> str:
    """How adaptive allocation handed the items out, and whether and when the study closed itself when settled,
    from ``facts.allocation`` ("" for uniform allocation)."""
    allocation = facts.get("allocation")
    if not allocation:
        return ""
    target = "every pair of systems" if allocation.get("target") == "all" else "every pair of the top cluster"
    effect = allocation.get("min_effect")
    lead = (f"Items were allocated adaptively: after a warm-up of {allocation.get('warmup')} judgments, only items "
            f"holding both systems of an undecided target pair were handed out, each pair followed by a betting "
            f"confidence sequence (Waudby-Smith & Ramdas, 2024) at a family-wise level of {allocation.get('alpha'):g} "
            f"(Bonferroni over the pairs)"
            + (f", a pair counting as indistinguishable once a difference of {effect:g} or more was excluded"
               if effect is not None else ", with no minimum effect") + ".")
    closed = allocation.get("closed_when_settled")
    if closed:
        when = str(closed.get("at", ""))[:16].replace("T", " ")
        decided = [pair for pair in closed.get("pairs") or [] if pair.get("decision") != "open"]
        out = closed.get("out_of_top") or []
        tail = f"The study closed itself when {target} was settled, on {when} UTC after {closed.get('judgments')} judgments"
        if decided:
            tail += ": " + "; ".join(_pair_words(pair) for pair in decided)
        if out:
            tail += f"; out of the top cluster: {', '.join(map(str, out))}"
        return f"{lead} {tail}."
    if allocation.get("close_when_settled"):
        return f"{lead} The study was set to close itself when {target} was settled; no such close is recorded."
    return f"{lead} The study was not set to close itself when settled."


def timing_clause(facts: dict) -> str:
    """The answer-time check, or that no answer time was recorded."""
    timing = (facts.get("recorded") or {}).get("timing")
    if timing is not None and timing.get("min_seconds") is not None:
        return f"answers faster than {timing['min_seconds']:g} s were flagged"
    return "no answer times were recorded" if timing is not None else "answer times were not recorded"


CONTROL_WORDS = {
    "scrambled_candidate": "{n} control items with a scrambled candidate{rate} were mixed in",
    "injected_error": "{n} control items{rate} were mixed in, each made from a real item by injecting one error (a "
                      "content word replaced, a negation dropped or added, a pronoun's gender swapped or a connective "
                      "reversed), failed unless a major or critical span overlapped the injected error",
    "degraded_copy": "{n} control items{rate} were mixed in, each a degraded copy of an item the annotator also "
                     "scored, failed unless the copy scored lower",
    "from_file": "the file marks {n} items as control copies",
}


def control_clauses(facts: dict) -> list[str]:
    """The control items (kind and share, as recorded) and the automatic exclusion rule."""
    controls = (facts.get("recorded") or {}).get("controls") or {}
    out = []
    n = int(controls.get("n_control_items") or 0)
    if n:
        rate = controls.get("spam_rate")
        rate_words = f" ({rate:.0%} of items)" if rate is not None else ""
        template = CONTROL_WORDS.get(controls.get("kind") or "", "{n} control items{rate} were included")
        out.append(template.format(n=n, rate=rate_words))
    if controls.get("auto_exclude_share") is not None:
        out.append(f"annotators failing more than {controls['auto_exclude_share']:.0%} of the controls were excluded")
    probes = int(controls.get("n_context_probes") or 0)
    if probes:
        rate = controls.get("probe_rate")
        rate_words = f" ({rate:.0%} of items)" if rate is not None else ""
        out.append(f"{probes} context probes{rate_words} were mixed in, copies in which one term, pronoun, "
                   "connective or form of address was changed so that the sentence reads well alone but contradicts the text before "
                   "it; a probe counted as caught under the protocol's rule, and each annotator's share of probes "
                   "caught (context-use rate) is reported beside their share of local controls passed")
    return out


def single_rater_sentence(facts: dict, unit: str) -> str:
    """When no ``unit`` has two raters, agreement is undefined: say why instead of printing n/a figures."""
    spread = facts.get(f"raters_per_{unit}")
    if spread is None or spread["max"] > 1:
        return ""
    noun = "segment (item × candidate)" if unit == "segment" else unit
    return (f"Inter-annotator agreement cannot be computed: every {noun} was rated by one annotator only, so "
            "the agreement coefficients of the report are undefined.")
