"""Report downloads: report.json and the CSV tables, staff only, same numbers as the command."""
from __future__ import annotations

import csv
import io
import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.report_study import ranking_study
from tests.factories import persona

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return ranking_study("dl-rk", n_items=8)


@pytest.fixture
def staff_client(client):
    client.force_login(persona("owner"))  # the owner of the studies the tests make, not a superuser
    return client


def command_json(slug: str, **kw) -> dict:
    out = StringIO()
    call_command("agreement", slug, json=True, stdout=out, **kw)
    return json.loads(out.getvalue())


def get_csv(client, slug: str, table: str, **params) -> list[dict]:
    resp = client.get(reverse("evaluators:report-csv", args=[slug, table]), params)
    assert resp.status_code == 200, resp.content
    assert resp["Content-Type"].startswith("text/csv")
    assert f'filename="{slug}-{table}.csv"' in resp["Content-Disposition"]
    return list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))


def test_report_json_is_the_command_json(staff_client, study):
    resp = staff_client.get(reverse("evaluators:report-json", args=[study.slug]), {"ties": "drop"})
    assert resp.status_code == 200
    assert json.loads(resp.content) == command_json(study.slug, ties="drop")


def test_coefficients_csv(staff_client, study):
    report = command_json(study.slug)
    rows = get_csv(staff_client, study.slug, "coefficients")
    main = {r["coefficient"]: r for r in rows if r["variant"] == "with ties"}
    other = {r["coefficient"]: r for r in rows if r["variant"] == "without ties"}
    assert set(main) == set(report["coefficients"]) == set(other)
    for key, coef in report["coefficients"].items():
        for field in ("value", "se", "ci_low", "ci_high", "p_value"):
            assert float(main[key][field]) == coef[field]  # unrounded
        assert float(other[key]["value"]) == report["without_ties"]["coefficients"][key]["value"]
    assert main["gwet_ac1"]["name"] == "Gwet's AC1"


def test_by_phenomenon_csv_has_dip_columns(staff_client, study):
    report = command_json(study.slug)
    rows = {r["phenomenon"]: r for r in get_csv(staff_client, study.slug, "by_phenomenon")}
    assert set(rows) == set(report["by_phenomenon"])
    for name, block in report["by_phenomenon"].items():
        assert float(rows[name]["gwet_ac1_value"]) == block["coefficients"]["gwet_ac1"]["value"]
        for col in ("n_reference_won", "n_system_won", "n_tie", "n_invalid"):
            assert int(rows[name][col]) == block[col]


def test_ranking_control_and_kappa_csv(staff_client, study):
    report = command_json(study.slug)
    ranking = get_csv(staff_client, study.slug, "ranking")
    assert [r["system"] for r in ranking] == [s["system"] for s in report["ranking"]["systems"]]
    assert float(ranking[0]["expected_wins_ci_low"]) == report["ranking"]["systems"][0]["expected_wins_ci"][0]
    control = get_csv(staff_client, study.slug, "control")
    assert float(control[0]["share"]) == report["control"]["share"]
    kappa = get_csv(staff_client, study.slug, "pairwise_kappa")
    assert [float(r["value"]) for r in kappa] == [p["value"] for p in report["pairwise_cohen_kappa"]]


def test_ratings_csv_reproduces_the_coefficients(staff_client, study, tmp_path):
    """The downloaded ratings table through `agreement --ratings` gives the report's coefficients."""
    for params in ({}, {"ties": "drop", "spam": "keep"}):
        rows = get_csv(staff_client, study.slug, "ratings", **params)
        path = tmp_path / "ratings.csv"
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        out = StringIO()
        call_command("agreement", ratings=str(path), item="item", rater="rater", label="label", json=True, stdout=out)
        again = json.loads(out.getvalue())
        report = command_json(study.slug, **params)
        assert again["coefficients"] == report["coefficients"]
        assert again["pairwise_cohen_kappa"] == report["pairwise_cohen_kappa"]


def test_unknown_table_is_404(staff_client, study):
    resp = staff_client.get(reverse("evaluators:report-csv", args=[study.slug, "secrets"]))
    assert resp.status_code == 404


def test_bad_policy_is_400(staff_client, study):
    resp = staff_client.get(reverse("evaluators:report-csv", args=[study.slug, "coefficients"]), {"spam": "x"})
    assert resp.status_code == 400 and "spam" in resp.json()["errors"]


def test_downloads_are_staff_only(client, study):
    for url in (reverse("evaluators:report-json", args=[study.slug]),
                reverse("evaluators:report-csv", args=[study.slug, "ratings"])):
        assert client.get(url).status_code == 302
    client.force_login(get_user_model().objects.create_user("someone", password="pw"))
    assert client.get(reverse("evaluators:report-json", args=[study.slug])).status_code == 302
