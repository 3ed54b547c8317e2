"""statements.insert_rows (the MQM TSV import's bulk INSERT) stores what ``bulk_create`` would.

The import of the WMT21 TED subset runs twice: once as shipped, once with ``insert_rows`` replaced by
``bulk_create`` of model instances made from the same rows. Both studies must hold the same candidates,
assignments and judgments, value for value (the clock stopped, so timestamps too), once the values that
differ by construction are set aside: primary keys (pks inside JSON translated to natural keys) and the
random public ids.
Timing of both ways: docs/mqm.md (bench/mqm_import_speed.py).
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence
from unittest import mock

import pytest
from django.db.models import Model

from annotation.handout import statements
from annotation.importing import mqm
from annotation.importing.mqm import mqm_tsv_import
from annotation.models import Assignment, Judgment
from studies.models import Candidate, Study

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"


def _bulk_create(model: type[Model], rows: Sequence[dict[str, Any]], *, now: datetime) -> None:
    model._default_manager.bulk_create([model(**row) for row in rows], batch_size=2000)


def _import(slug: str) -> Study:
    with mock.patch("django.utils.timezone.now", return_value=NOW):
        return mqm_tsv_import(name=FIXTURE.name, content=FIXTURE.read_text(encoding="utf-8"), slug=slug,
                              unclosed="close-at-end")


def _stored(study: Study) -> dict[str, list[tuple[Any, ...]]]:
    """The study's candidates, assignments and judgments with natural keys in place of primary keys."""
    candidates = Candidate.objects.filter(item__study=study).select_related("item")
    name = {c.pk: (c.item.external_id, c.system) for c in candidates}
    skip = {"id", "public_id"}

    def values(obj: Model) -> dict[str, Any]:
        return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields if f.attname not in skip}

    rows: dict[str, list[tuple[Any, ...]]] = {"candidates": [], "assignments": [], "judgments": []}
    for c in candidates:
        rows["candidates"].append(tuple(sorted({**values(c), "item_id": c.item.external_id}.items())))
    for a in Assignment.objects.filter(item__study=study).select_related("item", "annotator"):
        v = {**values(a), "item_id": a.item.external_id, "annotator_id": a.annotator.external_id,
             "candidate_order": [name[pk] for pk in a.candidate_order]}
        rows["assignments"].append(tuple(sorted((k, repr(x)) for k, x in v.items())))
    for j in Judgment.objects.filter(assignment__item__study=study).select_related(
            "assignment__item", "assignment__annotator"):
        answer = {"annotations": {repr(name[int(pk)]): a for pk, a in j.answer["annotations"].items()}}
        v = {**values(j), "assignment_id": (j.assignment.item.external_id, j.assignment.annotator.external_id),
             "answer": answer, "payload_digest": None}  # the digest is of the pk-keyed answer
        rows["judgments"].append(tuple(sorted((k, repr(x)) for k, x in v.items())))
    return {kind: sorted(found) for kind, found in rows.items()}


def test_insert_rows_stores_the_rows_bulk_create_stores(admin_user):
    fast = _import("fast")
    with mock.patch.object(mqm, "insert_rows", _bulk_create):
        orm = _import("orm")
    stored_fast, stored_orm = _stored(fast), _stored(orm)
    assert {k: len(v) for k, v in stored_fast.items()} == {"candidates": 1414, "assignments": 353, "judgments": 353}
    assert stored_fast == stored_orm
    # The random public ids are set, distinct, in the form the model's default makes.
    ids = list(Judgment.objects.filter(assignment__item__study=fast).values_list("public_id", flat=True))
    assert len(set(ids)) == len(ids) and all(ids)


def test_insert_rows_without_a_value_or_default_names_the_field():
    with pytest.raises(ValueError, match="Candidate.item_id: no value and no default"):
        statements.insert_rows(Candidate, [{"system": "s", "text": "t", "position": 1}],
                               now=datetime(2026, 1, 1))
