"""``prefill_skip_clean``: items on which the suggestions' source marks every candidate clean are not handed out,
and progress, the done page, the study's completion and the report count them apart (docs/ai-assistance.md)."""
from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.dashboard.progress import study_list, study_progress
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.items.selectors import progress
from annotation.models import Assignment
from protocols.spans.pages import SCORE_FIELD
from studies.definition.prefill import skips_clean
from studies.lifecycle.invariants import study_change_errors
from studies.models import Item, Study, Suggestion
from tests.span_study import span_study

pytestmark = pytest.mark.django_db

SOURCE = "CometKiwi-XL"


def clean_lines(study: Study, *, clean_items: set[int]) -> list[dict[str, Any]]:
    """One line per candidate: the items whose position in the file is in ``clean_items`` have every candidate
    clean; on the others the first candidate is clean and the second has one minor span."""
    rows = []
    items = list(study.items.filter(is_spam=False).order_by("pk"))
    for k, item in enumerate(items):
        for j, cand in enumerate(item.candidates.order_by("pk")):
            first = cand.text.index(" ") + 1
            second = cand.text.index(" ", first)
            marked = k not in clean_items and j == 1
            rows.append({"item": item.external_id, "system": cand.system,
                         "spans": [{"start": first, "end": second, "severity": "minor"}] if marked else []})
    return rows


def skipping(tmp_path: Path, *, skip: float = 1.0, items: int = 6, clean_items: set[int] | None = None,
             slug: str = "sk", **settings: Any) -> Study:
    settings.setdefault("redundancy", 2)
    settings.setdefault("prefill_share", 0.0)
    study = span_study(slug=slug, protocol="esa", items=items, candidates=2, prefill_skip_clean=skip, **settings)
    path = tmp_path / "qe.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in clean_lines(
        study, clean_items={0, 2, 4} if clean_items is None else clean_items)) + "\n", encoding="utf-8")
    call_command("import_prefill", study.slug, str(path), "--format", "jsonl", "--source", SOURCE, stdout=StringIO())
    study.refresh_from_db()
    return study


def _judge_all(study: Study, annotator: Any) -> list[int]:
    """The annotator takes and answers items until none is left; the items they got."""
    got = []
    while (assignment := assignment_next(annotator=annotator)) is not None:
        got.append(assignment.item_id)
        candidates = list(assignment.item.candidates.all())
        payload = {"annotations": {c.public_id: {"spans": [], "score": 80} for c in candidates}}
        judgment_submit(assignment=assignment, payload=payload, candidates=candidates)
    return got


def test_items_the_source_marks_clean_are_never_handed_out(tmp_path: Path) -> None:
    study = skipping(tmp_path)
    real = list(study.items.filter(is_spam=False).order_by("pk"))
    skipped = {real[0].pk, real[2].pk, real[4].pk}
    assert set(Item.objects.filter(study=study, skipped_clean=True).values_list("pk", flat=True)) == skipped
    assert study.n_open_items == 3 and not Item.objects.filter(pk__in=skipped, is_open=True).exists()
    annotators = annotators_create(study=study, count=3)
    got = [_judge_all(study, a) for a in annotators]
    assert not skipped & {i for g in got for i in g}
    # exact redundancy over the items still handed out: each of the 3 to two annotators, never twice to one
    counts = {i: sum(i in g for g in got) for i in {i for g in got for i in g}}
    assert counts == {real[1].pk: 2, real[3].pk: 2, real[5].pk: 2}
    assert all(len(g) == len(set(g)) for g in got)
    study.refresh_from_db()
    assert study.n_open_items == 0


def test_completion_counts_skipped_items_apart(tmp_path: Path) -> None:
    study = skipping(tmp_path)
    annotators = annotators_create(study=study, count=2)
    assert progress(annotator=annotators[0]) == {"done": 0, "total": 3}
    for a in annotators:
        _judge_all(study, a)
    assert progress(annotator=annotators[0]) == {"done": 3, "total": 3}
    row = study_progress(study)
    assert row["n_items"] == 6 and row["n_skipped"] == 3
    assert row["n_needed"] == 6 and row["n_done"] == 6 and row["percent"] == 100.0
    listed = study_list(queryset=Study.objects.filter(pk=study.pk)).get()
    assert listed.n_needed == listed.n_done == 6


def test_without_the_setting_every_item_is_needed(tmp_path: Path) -> None:
    study = skipping(tmp_path, skip=0.0, slug="sk0")
    assert not Item.objects.filter(study=study, skipped_clean=True).exists()
    assert study.n_open_items == 6
    row = study_progress(study)
    assert row["n_skipped"] == 0 and row["n_needed"] == 12
    assert study.provenance["prefill"]["n_clean_items"] == 3 and study.provenance["prefill"]["n_skipped_clean"] == 0


def test_a_share_skips_the_drawn_clean_items_only(tmp_path: Path) -> None:
    study = skipping(tmp_path, skip=0.5, items=40, clean_items=set(range(0, 40, 2)), slug="skh")
    real = list(study.items.filter(is_spam=False).order_by("pk"))
    clean = [real[k].pk for k in range(0, 40, 2)]
    expected = {pk for pk in clean if skips_clean(seed=study.seed, item=pk, share=0.5)}
    assert 0 < len(expected) < 20  # the draw splits the 20 clean items
    assert set(Item.objects.filter(study=study, skipped_clean=True).values_list("pk", flat=True)) == expected
    record = study.provenance["prefill"]
    assert record["n_clean_items"] == 20 and record["n_skipped_clean"] == len(expected)
    assert record["skip_clean_share"] == 0.5
    assert study.n_open_items == 40 - len(expected)


def test_decoys_avoid_skipped_items(tmp_path: Path) -> None:
    study = skipping(tmp_path, prefill_decoys=0.5, slug="skd")
    decoys = Suggestion.objects.filter(source__study=study, is_decoy=True)
    assert decoys.exists()
    assert not decoys.filter(candidate__item__skipped_clean=True).exists()


def test_spam_copies_of_skipped_items_are_still_handed_out(tmp_path: Path) -> None:
    study = skipping(tmp_path, items=10, clean_items=set(range(10)), spam_rate=0.3, slug="sks", redundancy=1)
    copies = Item.objects.filter(study=study, is_spam=True)
    assert copies.exists() and all(c.spam_of.skipped_clean for c in copies)
    assert not copies.filter(skipped_clean=True).exists()
    got = _judge_all(study, annotators_create(study=study, count=1)[0])
    assert set(got) == set(copies.values_list("pk", flat=True))


def test_the_setting_changes_while_nothing_was_handed_out_and_is_locked_after(tmp_path: Path) -> None:
    study = skipping(tmp_path, skip=0.0, slug="skl")
    study.protocol_settings = {**study.protocol_settings, "prefill_skip_clean": 1.0}
    assert study_change_errors(study=study) == {}
    study.save()
    study.refresh_from_db()
    assert Item.objects.filter(study=study, skipped_clean=True).count() == 3 and study.n_open_items == 3
    assert study.provenance["prefill"]["n_skipped_clean"] == 3
    annotator = annotators_create(study=study, count=1)[0]
    assert assignment_next(annotator=annotator) is not None
    study.protocol_settings = {**study.protocol_settings, "prefill_skip_clean": 0.0}
    errors = study_change_errors(study=study)
    assert "prefill_skip_clean cannot change from 1.0 to 0.0" in errors["protocol_settings"]
    # a bad value is refused by the protocol's settings schema
    study.protocol_settings = {**study.protocol_settings, "prefill_skip_clean": 1.5}
    with pytest.raises(ValidationError) as refused:
        study.clean()
    assert "protocol_settings" in refused.value.message_dict


def test_import_prefill_refuses_to_skip_once_items_were_handed_out(tmp_path: Path) -> None:
    study = span_study(slug="skr", protocol="esa", items=4, candidates=2, prefill_skip_clean=1.0)
    assignment_next(annotator=annotators_create(study=study, count=1)[0])
    path = tmp_path / "qe.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in clean_lines(study, clean_items={0})) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="prefill_skip_clean 1, and items were already handed out"):
        call_command("import_prefill", study.slug, str(path), "--format", "jsonl", "--source", SOURCE,
                     stdout=StringIO())
    assert not Suggestion.objects.exists() and not Item.objects.filter(skipped_clean=True).exists()


def test_the_pages_reach_the_done_page_and_the_study_its_end(tmp_path: Path, staff: Client) -> None:
    study = skipping(tmp_path, redundancy=1, slug="skp", completion_code="C0DE-42")
    annotator = annotators_create(study=study, count=1)[0]
    client = Client()
    seen = []
    where = client.get(reverse("annotation:item-current", args=[annotator.token]))
    while "/done" not in where["Location"]:
        page = client.get(where["Location"])
        assert page.status_code == 200
        body = page.content.decode()
        for secret in (SOURCE, "skipped", "clean"):
            assert secret not in body
        assert re.search(r"· \d of 3", body)  # the page's progress counts the three items handed out
        assignment = Assignment.objects.get(public_id=where["Location"].rstrip("/").rsplit("/", 1)[-1])
        seen.append(assignment.item_id)
        form = {SCORE_FIELD.format(c.public_id): "90" for c in assignment.item.candidates.all()}
        where = client.post(where["Location"], form)
        assert where.status_code == 303, where.content
    assert not set(seen) & set(Item.objects.filter(skipped_clean=True).values_list("pk", flat=True))
    done = client.get(where["Location"])
    assert done.status_code == 200 and len(seen) == 3
    assert "C0DE-42" in done.content.decode()
    row = study_progress(study)
    assert row["percent"] == 100.0 and row["n_skipped"] == 3
    listed = [s for s in staff.get("/api/v1/studies/").json() if s["slug"] == study.slug][0]
    assert listed["n_skipped"] == 3 and listed["n_needed"] == 3 and listed["progress"] == 1.0
    detail = staff.get(reverse("studies:detail", args=[study.slug])).content.decode()
    assert "3</strong> items skipped as clean by CometKiwi-XL" in detail
    assert "3</strong> of 3 judgments (100.0%)" in detail


def test_report_records_the_skipped_items_and_imputes_nothing(tmp_path: Path) -> None:
    from annotation.exporting.judgments import export_lines
    from evaluators.reports.study_stats import study_report
    study = skipping(tmp_path, slug="skm", prefill_share=1.0, redundancy=1)
    annotator = annotators_create(study=study, count=1)[0]
    from tests.conftest import annotator_client
    client = annotator_client(annotator)
    while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
        data = resp.json()
        own = {c["id"]: {"spans": [], "score": 70} for c in data["candidates"]}
        fates = {s["id"]: {"fate": "kept"} for s in data["suggestions"]}
        assert client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": own, "suggestions": fates},
                           format="json").status_code == 201
    rows = [json.loads(line) for line in export_lines(study, fmt="jsonl")]
    skipped = set(Item.objects.filter(study=study, skipped_clean=True).values_list("external_id", flat=True))
    assert len(skipped) == 3 and not skipped & {r["item"] for r in rows}
    report = study_report(study)
    facts = report["facts"]["prefill"]
    assert facts["n_skipped_clean"] == 3 and facts["n_clean_items"] == 3 and facts["source"] == SOURCE
    methods = report["prefill"]["methods"]
    assert ("Items on which CometKiwi-XL marked every candidate clean (3 items) were left out of the annotation "
            "(all of them): 3 items were never shown to annotators.") in methods
    assert "no score was imputed for the skipped items" in methods


def test_a_copy_starts_with_every_item_open_and_none_skipped(tmp_path: Path) -> None:
    from studies.lifecycle.invariants import study_copy
    study = skipping(tmp_path, slug="skc", redundancy=1)
    _judge_all(study, annotators_create(study=study, count=1)[0])
    study.refresh_from_db()
    assert study.n_open_items == 0
    copy = study_copy(study=study, slug="skc-copy")
    copy.refresh_from_db()
    assert copy.n_open_items == 6 and Item.objects.filter(study=copy, is_open=True).count() == 6
    assert not Item.objects.filter(study=copy, skipped_clean=True).exists()


def test_a_study_with_the_setting_runs_the_same_statements_to_hand_out(tmp_path: Path) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    counts = []
    for skip, slug in ((0.0, "skq0"), (1.0, "skq1")):
        study = skipping(tmp_path, skip=skip, slug=slug)
        annotator = annotators_create(study=study, count=1)[0]
        with CaptureQueriesContext(connection) as queries:
            assert assignment_next(annotator=annotator) is not None
        counts.append(len(queries))
    assert counts[0] == counts[1]
