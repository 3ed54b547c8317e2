"""`quality SLUG --json` (INTERFACES.md) and issue #3's acceptance: a 40-item choice study, spam 0.1, two annotators."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotator
from annotation.handout.services import annotators_create
from studies.models import Candidate
from tests.conftest import annotator_client
from tests.factories import make_study

pytestmark = pytest.mark.django_db

INTERFACE_KEYS = {"annotator", "n_judgments", "spam_seen", "spam_failed", "reference_first_rate", "median_seconds",
                  "excluded", "exclusion_reason"}


def quality_json(slug: str) -> list[dict]:
    out = io.StringIO()
    call_command("quality", slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def run_acceptance(slug: str, seed: int):
    """Two annotators work a 40-item choice study (spam_rate 0.1, redundancy 2) through the API.

    The first always picks the first candidate on screen; the second never picks
    the scrambled one (the test looks the candidates up in the database, which an
    annotator cannot). Returns the study and, per annotator, what they met.
    """
    study = make_study(slug=slug, protocol="choice", n_items=40, n_candidates=2,
                       settings={"spam_rate": 0.1, "redundancy": 2, "seed": seed, "options": ["neither", "invalid"]})
    first_picker, careful = annotators_create(study=study, count=2)
    clients = {first_picker.code: annotator_client(first_picker), careful.code: annotator_client(careful)}
    met: dict[str, list[dict]] = {first_picker.code: [], careful.code: []}
    active = list(clients)
    while active:
        for code in list(active):
            resp = clients[code].get("/api/v1/annotate/next")
            if resp.status_code == 204:
                active.remove(code)
                continue
            data = resp.json()
            on_screen = [Candidate.objects.select_related("item").get(public_id=c["id"]) for c in data["candidates"]]
            if code == first_picker.code:
                pick = on_screen[0]
            else:
                pick = next(c for c in on_screen if not c.is_spam)
            resp = clients[code].post(f"/api/v1/annotate/{data['assignment']}/judgment", {"choice": pick.public_id},
                                      format="json")
            assert resp.status_code == 201, resp.content
            item = on_screen[0].item
            met[code].append({"item": item.external_id, "spam": item.is_spam, "first_is_spam": on_screen[0].is_spam,
                              "first_is_reference": on_screen[0].is_reference, "picked_reference": pick.is_reference})
    return study, (first_picker, careful), met


def test_acceptance_spam_checks_through_the_api():
    study, (first_picker, careful), met = run_acceptance("accept", seed=20261122)
    rows = {row["annotator"]: row for row in quality_json(study.slug)}
    assert set(rows) == {first_picker.code, careful.code}
    for code in rows:
        assert len(met[code]) == 44  # 40 real items + 4 spam items, each judged by both
        assert sum(m["spam"] for m in met[code]) == 4  # about four spam items each (exactly 4 here)
        assert INTERFACE_KEYS <= set(rows[code])

    # the first-picker fails exactly the spam checks where the scrambled candidate came first on screen
    expected_failed = sum(m["spam"] and m["first_is_spam"] for m in met[first_picker.code])
    assert 0 < expected_failed < 4  # the seed gives both kinds of screen, so the rule is really exercised
    first = rows[first_picker.code]
    assert (first["n_judgments"], first["spam_seen"], first["spam_failed"]) == (44, 4, expected_failed)
    assert first["spam_failed_share"] == expected_failed / 4
    real = [m for m in met[first_picker.code] if not m["spam"]]
    assert first["reference_first_rate"] == sum(m["first_is_reference"] for m in real) / 40

    other = rows[careful.code]
    assert (other["n_judgments"], other["spam_seen"], other["spam_failed"]) == (44, 4, 0)
    # on real items nothing is scrambled, so the careful annotator also took the first candidate on screen
    careful_real = [m for m in met[careful.code] if not m["spam"]]
    assert other["reference_first_rate"] == sum(m["picked_reference"] for m in careful_real) / 40
    assert other["excluded"] is False and other["exclusion_reason"] == ""
    assert isinstance(other["median_seconds"], float)


def test_acceptance_is_exactly_reproducible_with_the_same_seed():
    _, _, met_a = run_acceptance("run-a", seed=77)
    _, _, met_b = run_acceptance("run-b", seed=77)
    _, _, met_c = run_acceptance("run-c", seed=78)
    assert list(met_a.values()) == list(met_b.values())  # same items, same order, same screens
    spam_a = sorted(m["item"] for m in list(met_a.values())[0] if m["spam"])
    spam_c = sorted(m["item"] for m in list(met_c.values())[0] if m["spam"])
    assert list(met_a.values()) != list(met_c.values())
    assert len(spam_a) == len(spam_c) == 4
    qa = [{k: v for k, v in r.items() if k not in ("annotator", "median_seconds")} for r in quality_json("run-a")]
    qb = [{k: v for k, v in r.items() if k not in ("annotator", "median_seconds")} for r in quality_json("run-b")]
    assert qa == qb


def test_unknown_slug_is_a_clear_error():
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("quality", "nope", "--json", stdout=io.StringIO())


def test_readable_table_and_apply_rule():
    study = make_study(slug="tbl", protocol="choice", n_items=10, n_candidates=2,
                       settings={"spam_rate": 0.2, "redundancy": 1, "seed": 1})
    annotator = annotators_create(study=study)[0]
    client = annotator_client(annotator)
    while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
        data = resp.json()
        spam = [c["id"] for c in data["candidates"] if Candidate.objects.get(public_id=c["id"]).is_spam]
        client.post(f"/api/v1/annotate/{data['assignment']}/judgment",
                    {"choice": spam[0] if spam else data["candidates"][0]["id"]}, format="json")
    out = io.StringIO()
    call_command("quality", "tbl", stdout=out)
    text = out.getvalue()
    assert text.splitlines()[0].split()[:4] == ["annotator", "n_judgments", "spam_seen", "spam_failed"]
    assert annotator.code in text and "automatic exclusion: none" in text
    with pytest.raises(CommandError, match="--apply-rule: .* no auto_exclude_share"):
        call_command("quality", "tbl", "--apply-rule", stdout=io.StringIO())
    study.auto_exclude_share = 0.5
    study.auto_exclude_min_checks = 2  # two spam checks answered (the default waits for 3)
    study.save()
    err = io.StringIO()
    call_command("quality", "tbl", "--apply-rule", "--json", stdout=io.StringIO(), stderr=err)
    assert f"excluded {annotator.code}: auto: failed 2 of 2 spam checks" in err.getvalue()
    assert Annotator.objects.get(pk=annotator.pk).excluded
    assert quality_json("tbl")[0]["excluded"] is True
