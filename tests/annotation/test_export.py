"""studies/export.py, the export_judgments command and the staff download view."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Assignment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from annotation.exporting.judgments import BASE_COLUMNS, COLUMNS, judgment_cells, judgment_rows, judgments_frame
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def judge_everything(study, n_annotators: int = 2, answer=None) -> list:
    """Each annotator judges until nothing is left; ``answer(assignment, candidates)`` builds the payload."""
    annotators = annotators_create(study=study, count=n_annotators)
    for annotator in annotators:
        while (assignment := assignment_next(annotator=annotator)) is not None:
            candidates = ordered_candidates(assignment)
            judgment_submit(assignment=assignment, payload=answer(assignment, candidates))
    return annotators


def rank_by_system(assignment, candidates):
    """Ranks by system name (reference 1, sys1 2, …) whatever the screen order: a known truth to check."""
    order = sorted(candidates, key=lambda c: c.system)
    return {"ranks": {c.public_id: order.index(c) + 1 for c in candidates}}


def test_columns_are_the_interface_columns_then_extras():
    assert COLUMNS[:len(BASE_COLUMNS)] == [
        "study", "item", "document", "annotator", "system", "is_reference", "is_spam", "rank", "choice", "label",
        "screen_position", "started_at", "submitted_at", "duration_ms"]
    assert {"is_spam_candidate", "judgment", "revision", "is_current", "phenomenon", "protocol", "chosen",
            "excluded"} <= set(COLUMNS)


def test_judgment_cells_are_the_rows_columns_and_read_no_times_unless_asked():
    study = make_study(slug="cells", n_items=3, n_candidates=3, settings={"redundancy": 2})
    judge_everything(study, answer=rank_by_system)
    rows = list(judgment_rows(study))
    every = list(judgment_cells(study, COLUMNS))
    assert every == [tuple(row[c] for c in COLUMNS) for row in rows] and len(every) == 3 * 2 * 3
    asked = ("system", "rank", "judgment", "annotator")
    assert list(judgment_cells(study, asked)) == [tuple(row[c] for c in asked) for row in rows]
    assert list(judgment_cells(study, ["rank"])) == [(row["rank"],) for row in rows]
    # columns not asked for that cost a read are not read: the report's columns hold no times
    assert all(row["started_at"] is not None and row["screen_position"] is not None for row in rows)
    no_times = list(judgment_cells(study, ("judgment", "duration_ms")))
    assert no_times == [(row["judgment"], row["duration_ms"]) for row in rows]
    with pytest.raises(ValueError, match="unknown export column"):
        list(judgment_cells(study, ("system", "nonsense")))


def test_ranking_rows_one_per_judgment_and_candidate():
    study = make_study(slug="rk", n_items=4, n_candidates=3, settings={"redundancy": 2}, phenomena=("it-er",))
    annotators = judge_everything(study, answer=rank_by_system)
    rows = list(judgment_rows(study))
    assert len(rows) == 4 * 2 * 3
    assert {r["annotator"] for r in rows} == {a.code for a in annotators}
    for row in rows:
        expected_rank = {"reference": 1, "sys1": 2, "sys2": 3}[row["system"]]
        assert row["rank"] == expected_rank
        assert row["is_reference"] is (row["system"] == "reference")
        assert row["study"] == "rk" and row["protocol"] == "ranking" and row["phenomenon"] == "it-er"
        assert row["choice"] is None and row["label"] is None and row["chosen"] is None
        assert row["is_current"] is True and row["revision"] == 1 and row["excluded"] is False
    # screen position is the 1-based place in the annotator's stored candidate order
    assignment = Assignment.objects.filter(annotator=annotators[0]).first()
    shown = {pk: k + 1 for k, pk in enumerate(assignment.candidate_order)}
    mine = [r for r in rows if r["annotator"] == annotators[0].code and r["item"] == assignment.item.external_id]
    by_system = {c.system: c.pk for c in assignment.item.candidates.all()}
    assert {r["system"]: r["screen_position"] for r in mine} == {s: shown[pk] for s, pk in by_system.items()}


def test_spam_items_and_spam_candidates_are_flagged():
    study = make_study(slug="sp", n_items=10, settings={"spam_rate": 0.2, "redundancy": 1})
    judge_everything(study, n_annotators=1, answer=rank_by_system)
    rows = list(judgment_rows(study))
    spam_rows = [r for r in rows if r["is_spam"]]
    assert spam_rows and all(r["item"].endswith("~spam") for r in spam_rows)
    scrambled = [r for r in rows if r["is_spam_candidate"]]
    assert len(scrambled) == len({r["item"] for r in spam_rows})  # exactly one scrambled candidate a spam item
    assert all(r["is_spam"] for r in scrambled)


def test_choice_exports_system_name_and_chosen_flag():
    study = make_study(slug="ch", protocol="choice", n_items=3, n_candidates=2,
                       settings={"options": ["neither", "tie"], "redundancy": 1})
    answers = iter(["sys1", "neither", "reference"])

    def choose(assignment, candidates):
        wanted = next(answers)
        by_system = {c.system: c.public_id for c in candidates}
        return {"choice": by_system.get(wanted, wanted)}

    judge_everything(study, n_annotators=1, answer=choose)
    rows = list(judgment_rows(study))
    choices = sorted({(r["judgment"], r["choice"]) for r in rows}, key=lambda x: x[1])
    assert [c for _, c in choices] == ["neither", "reference", "sys1"]
    for row in rows:
        if row["choice"] == "neither":
            assert row["chosen"] is False
        else:
            assert row["chosen"] is (row["system"] == row["choice"])
        assert row["rank"] is None


def test_labels_joined_with_plus():
    study = make_study(slug="lb", protocol="judgment", n_items=2, n_candidates=1,
                       settings={"labels": ["ok", "pronoun", "tense"], "multi_label": True, "redundancy": 1})
    judge_everything(study, n_annotators=1, answer=lambda a, c: {"labels": ["tense", "pronoun"]})
    rows = list(judgment_rows(study))
    assert len(rows) == 2 and {r["label"] for r in rows} == {"pronoun+tense"}  # study label order


def test_history_includes_superseded_revisions():
    study = make_study(slug="hi", n_items=1, n_candidates=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study, count=1)[0]
    assignment = assignment_next(annotator=annotator)
    a, b = ordered_candidates(assignment)
    judgment_submit(assignment=assignment, payload={"ranks": {a.public_id: 1, b.public_id: 2}})
    judgment_submit(assignment=assignment, payload={"ranks": {a.public_id: 2, b.public_id: 1}})
    current = list(judgment_rows(study))
    history = list(judgment_rows(study, history=True))
    assert len(current) == 2 and {r["revision"] for r in current} == {2}
    assert len(history) == 4
    assert sorted((r["revision"], r["is_current"]) for r in history) == [(1, False), (1, False), (2, True), (2, True)]
    first = {r["system"]: r["rank"] for r in history if r["revision"] == 1}
    second = {r["system"]: r["rank"] for r in history if r["revision"] == 2}
    assert first == {a.system: 1, b.system: 2} and second == {a.system: 2, b.system: 1}


def test_constant_number_of_queries(django_assert_max_num_queries):
    small = make_study(slug="q1", n_items=2, settings={"redundancy": 1})
    judge_everything(small, n_annotators=1, answer=rank_by_system)
    large = make_study(slug="q2", n_items=30, settings={"redundancy": 3})
    judge_everything(large, n_annotators=3, answer=rank_by_system)
    with django_assert_max_num_queries(6):
        assert len(list(judgment_rows(small))) == 2 * 3
    with django_assert_max_num_queries(6):
        assert len(list(judgment_rows(large))) == 30 * 3 * 3


def test_duration_is_the_servers_and_the_clients_comes_last():
    """duration_ms (interface column) is the server's figure; the client's is an extra column, before the span ones."""
    from datetime import timedelta

    from django.utils import timezone

    assert COLUMNS[-6:] == ["client_duration_ms", "score", "spans", "control_error", "assisted", "suggestions"] and COLUMNS.index("duration_ms") == len(BASE_COLUMNS) - 1
    study = make_study(slug="times", n_items=2, settings={"redundancy": 1})
    annotator = annotators_create(study=study)[0]
    for claimed in ("2026-01-01T10:00:50Z", None):
        assignment = assignment_next(annotator=annotator)
        Assignment.objects.filter(pk=assignment.pk).update(opened_at=timezone.now() - timedelta(seconds=20))
        payload = rank_by_system(assignment, ordered_candidates(assignment))
        if claimed:  # an API client claiming 50 s on an item served 20 s ago
            payload |= {"client_started_at": "2026-01-01T10:00:00Z", "client_submitted_at": claimed}
        judgment_submit(assignment=assignment, payload=payload)
    rows = list(judgment_rows(study))
    assert sorted({row["client_duration_ms"] for row in rows}, key=str) == [50_000, None]
    assert all(20_000 <= row["duration_ms"] < 25_000 for row in rows)
    assert all(row["duration_ms"] == pytest.approx((row["submitted_at"] - row["started_at"]).total_seconds() * 1000,
                                                   abs=1000) for row in rows)
    frame = judgments_frame(study)
    assert str(frame["client_duration_ms"].dtype) == "Int64" and frame["client_duration_ms"].isna().sum() == 3


def test_frame_has_columns_and_types():
    study = make_study(slug="fr", n_items=3, settings={"redundancy": 2})
    judge_everything(study, answer=rank_by_system)
    frame = judgments_frame(study)
    assert list(frame.columns) == COLUMNS
    assert len(frame) == 3 * 2 * 3
    assert str(frame["rank"].dtype) == "Int64" and str(frame["screen_position"].dtype) == "Int64"
    assert str(frame["submitted_at"].dtype).startswith("datetime64") and frame["is_reference"].dtype == bool
    assert frame.groupby("system")["rank"].mean().to_dict() == {"reference": 1, "sys1": 2, "sys2": 3}
    empty = judgments_frame(make_study(slug="empty", n_items=1))
    assert list(empty.columns) == COLUMNS and len(empty) == 0


def test_command_csv_and_jsonl(tmp_path):
    study = make_study(slug="cmd", n_items=2, settings={"redundancy": 1})
    judge_everything(study, n_annotators=1, answer=rank_by_system)
    out = io.StringIO()
    call_command("export_judgments", "cmd", "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 6 and list(rows[0]) == COLUMNS
    assert {r["is_reference"] for r in rows} == {"true", "false"} and rows[0]["started_at"][:2] == "20"
    target = tmp_path / "x.jsonl"
    call_command("export_judgments", "cmd", "--format", "jsonl", "--output", str(target), stderr=io.StringIO())
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(lines) == 6 and set(lines[0]) == set(COLUMNS) and isinstance(lines[0]["rank"], int)


def test_command_output_reports_the_true_row_count():
    """The count is of rows, not of the CSV writer's chunks (up to 1,000 rows each, header
    included): it said 0 for any CSV export of under 1,000 rows."""
    import tempfile
    from pathlib import Path

    study = make_study(slug="count", n_items=4, settings={"redundancy": 1})
    judge_everything(study, n_annotators=1, answer=rank_by_system)
    with tempfile.TemporaryDirectory() as folder:
        for fmt in ("csv", "jsonl"):
            target = Path(folder) / f"x.{fmt}"
            err = io.StringIO()
            call_command("export_judgments", "count", "--format", fmt, "--output", str(target), stderr=err)
            written = target.read_text().splitlines()
            n_rows = len(written) - (1 if fmt == "csv" else 0)
            assert n_rows == 12 and f"{n_rows} row(s) written" in err.getvalue(), err.getvalue()


def test_command_unknown_slug():
    with pytest.raises(CommandError, match="slug: no study 'nope'"):
        call_command("export_judgments", "nope")


def test_download_view_staff_only(client, admin_user, django_user_model):
    study = make_study(slug="dl", n_items=2, settings={"redundancy": 1})
    judge_everything(study, n_annotators=1, answer=rank_by_system)
    url = reverse("studies:export", args=["dl", "csv"])
    assert client.get(url).status_code == 302  # to the admin login
    user = django_user_model.objects.create_user("researcher", password="x", is_staff=False)
    client.force_login(user)
    assert client.get(url).status_code == 302
    client.force_login(admin_user)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="dl-judgments.csv"' in response["Content-Disposition"]
    body = b"".join(response.streaming_content).decode()
    assert len(list(csv.DictReader(io.StringIO(body)))) == 6
    jsonl = client.get(reverse("studies:export", args=["dl", "jsonl"]) + "?history=1")
    assert len(b"".join(jsonl.streaming_content).splitlines()) == 6
    assert client.get(reverse("studies:export", args=["dl", "xml"])).status_code == 404
    assert client.get(reverse("studies:export", args=["nope", "csv"])).status_code == 404
    assert client.post(url).status_code == 405
