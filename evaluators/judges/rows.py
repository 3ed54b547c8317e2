"""Reads of the stored judges: their answers as export rows (for the report) and as their import file (for export).

Each function runs a constant number of queries whatever the number of judges and answers.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from annotation.exporting.judgments import answer_cells
from evaluators.models import JudgeAnswer, LLMJudge
from studies.models import Candidate, Item, Study

#: The prefix of a judge's rater id where judges and annotators meet in one table (never an annotator's code,
#: which has no colon).
RATER_PREFIX = "judge:"


def judge_rater(name: str) -> str:
    """The rater id of the judge ``name`` in tables that hold annotators too."""
    return RATER_PREFIX + name


def study_judges(study: Study) -> list[LLMJudge]:
    """The study's judges, by name."""
    return list(LLMJudge.objects.filter(study=study).order_by("name"))


def _candidates(study: Study) -> dict[int, list[tuple[int, str, bool]]]:
    """item pk → its candidates ``(pk, system, is_reference)`` in study-file order (as the export orders them)."""
    out: dict[int, list[tuple[int, str, bool]]] = {}
    for pk, item_id, system, is_ref in (Candidate.objects.filter(item__study=study)
                                        .order_by("item_id", "position", "pk")
                                        .values_list("pk", "item_id", "system", "is_reference").iterator(chunk_size=5000)):
        out.setdefault(item_id, []).append((pk, system, is_ref))
    return out


def judge_rows(study: Study, judges: Sequence[LLMJudge]) -> Iterator[dict[str, Any]]:
    """The judges' answers as export rows (``annotation.exporting.judgments`` columns the report reads), one per
    (answer, candidate), the judge's rater id (:func:`judge_rater`) as the annotator: never excluded, never pilot."""
    if not judges:
        return
    names = {j.pk: judge_rater(j.name) for j in judges}
    candidates = _candidates(study)
    system_of = {pk: system for cands in candidates.values() for pk, system, _ in cands}
    items = {pk: (ext, doc, phen, spam) for pk, ext, doc, phen, spam in
             Item.objects.filter(study=study).values_list("pk", "external_id", "document_id", "phenomenon", "is_spam")
             .iterator(chunk_size=5000)}
    answers = (JudgeAnswer.objects.filter(judge_id__in=list(names)).order_by("judge_id", "item_id")
               .values_list("judge_id", "item_id", "answer"))
    for judge_id, item_id, answer in answers.iterator(chunk_size=2000):
        ext, doc, phenomenon, item_spam = items[item_id]
        cands = candidates.get(item_id, [])
        for (pk, system, is_ref), cells in zip(cands, answer_cells(answer, [c[0] for c in cands], system_of)):
            yield {"study": study.slug, "item": ext, "document": doc, "annotator": names[judge_id], "system": system,
                   "is_reference": is_ref, "is_spam": item_spam, "excluded": False, "pilot": False,
                   "phenomenon": phenomenon, "judgment": f"{names[judge_id]}|{ext}", "protocol": study.protocol,
                   "is_current": True, "duration_ms": None, **cells}


def _body(answer: dict[str, Any], cands: list[tuple[int, str, bool]], fields: tuple[str, ...],
          uses_spans: bool) -> dict[str, Any]:
    """A stored answer back in the answer body's shape (``fields``: the protocol's ``answer_fields``), candidates
    named by system: the import's own shape. A choice stored beside annotations is the body's ``preference``;
    the stored form's empty span list of a study without spans is not part of the body."""
    system = {str(pk): name for pk, name, _ in cands}
    body: dict[str, Any] = {}
    if "ranks" in answer:
        body["ranks"] = {system[pk]: rank for pk, rank in answer["ranks"].items()}
    if "labels" in answer:
        labels = answer["labels"]
        body.update({"label": labels[0]} if len(labels) == 1 else {"labels": labels})
    if "annotations" in answer:
        body["annotations"] = {system[pk]: {k: v for k, v in entry.items() if k != "spans" or uses_spans}
                               for pk, entry in answer["annotations"].items()}
    if "choice" in answer:
        choice = answer["choice"]
        value = system[str(choice["candidate"])] if "candidate" in choice else choice["option"]
        body["choice" if "choice" in fields else "preference"] = value
    return body


def judge_file_lines(study: Study, judge: LLMJudge) -> Iterator[str]:
    """The judge's answers as the JSON Lines file ``import_judge`` reads (one answer a line, in item order):
    importing it again stores the same answers."""
    candidates = _candidates(study)
    items = dict(Item.objects.filter(study=study).values_list("pk", "external_id"))
    for item_id, answer in judge.answers.order_by("item_id").values_list("item_id", "answer").iterator(chunk_size=2000):
        body = _body(answer, candidates.get(item_id, []), study.spec.answer_fields, study.spec.uses_spans(study))
        yield json.dumps({"item": items[item_id], **body}, ensure_ascii=False) + "\n"
