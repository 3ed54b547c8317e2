"""The comparison page, its forms and the researcher API: staff only, same numbers as the command."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evaluators.models import EvaluationJob, Evaluator, MetricScore
from evaluators.metrics.scores import scores_import
from tests.compare_study import compare_study, score_csv

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    s = compare_study(slug="cmpv", spam_rate=0.0)
    scores_import(study=s, file_name="o.csv", content=score_csv(name="oracle"))
    scores_import(study=s, file_name="r.csv", content=score_csv(name="reversed", reverse=True))
    return s


@pytest.fixture
def not_staff() -> Client:
    """Signed in, but not a staff account: no researcher page at all."""
    client = Client()
    client.force_login(User.objects.create_user("someone", password="pw"))
    return client


def test_page_shows_the_comparison(staff, study):
    response = staff.get(reverse("compare-report", args=[study.slug]), {"bootstrap": 100})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-evaluator="oracle" data-field="tau">1.000<' in html
    assert 'data-evaluator="reversed" data-field="tau">-1.000<' in html
    assert 'data-evaluator="oracle" data-field="accuracy">1.000<' in html
    assert html.count("<svg") == 2 and "Human versus oracle system scores" in html
    assert "Williams tests between evaluators" in html
    assert "compare cmpv --json --human-score expected_wins --bootstrap 100 --seed 0" in html


def test_page_permissions_and_methods(not_staff, staff, study):
    url = reverse("compare-report", args=[study.slug])
    assert Client().get(url).status_code == 302  # to the admin login
    assert not_staff.get(url).status_code == 302
    assert staff.post(url).status_code == 405
    assert staff.get(reverse("compare-report", args=["missing"])).status_code == 404
    assert staff.get(reverse("compare-run", args=[study.slug])).status_code == 405
    bad = staff.get(url, {"bootstrap": "lots", "human_score": "vibes"})  # falls back to the defaults
    assert bad.status_code == 400
    html = bad.content.decode()
    assert "bootstrap: Enter a whole number." in html and "human_score: Select a valid choice" in html


def test_run_builtin_from_the_page(staff, study, django_capture_on_commit_callbacks):
    run = reverse("compare-run", args=[study.slug]) + "?bootstrap=50"
    with django_capture_on_commit_callbacks(execute=True):  # the job is queued once the request commits
        response = staff.post(run, {"evaluators": ["chrf", "pronoun-f"]})
    assert response.status_code == 302
    assert response["Location"] == reverse("compare-report", args=[study.slug]) + "?bootstrap=50"
    assert set(Evaluator.objects.filter(study=study).values_list("name", flat=True)) >= {"chrf", "pronoun-f"}
    bad = staff.post(run, {"evaluators": ["comet"]})
    assert bad.status_code == 400 and "evaluators: Select a valid choice" in bad.content.decode()
    bad = staff.post(run, {"evaluators": ["blonde"], "nlp": "spacy:../x"})
    assert bad.status_code == 400 and "nlp: Give lexicon or spacy:PIPELINE" in bad.content.decode()
    # BlonDe proper without a spaCy pipeline is refused on the page, with how to get one; nothing is queued.
    jobs = EvaluationJob.objects.count()
    bad = staff.post(run, {"evaluators": ["chrf", "blonde", "dblonde"], "nlp": "lexicon"})
    html = bad.content.decode()
    assert bad.status_code == 400 and EvaluationJob.objects.count() == jobs
    assert ("nlp: blonde, dblonde need a spaCy pipeline: give spacy:PIPELINE here (an installed pipeline, e.g. "
            "spacy:en_core_web_sm; see docs/evaluators.md, &#x27;The BlonDe family&#x27;), or pick blonde-lex, "
            "dblonde-lex, the lexicon-backend approximation.") in html
    assert "nlp: blonde-plus needs a spaCy pipeline" in staff.post(run, {"evaluators": ["blonde-plus"]}).content.decode()
    # The page shows the signature and the paired test the evaluator run stored (never computed by the page).
    page = staff.get(reverse("compare-report", args=[study.slug]) + "?bootstrap=50").content.decode()
    chrf = Evaluator.objects.get(study=study, name="chrf")
    assert chrf.paired is not None and chrf.paired["baseline"] == "sys1"
    assert f'data-field="signature">{chrf.signature}</code>' in page
    other = next(t for t in chrf.paired["tests"] if not t["is_baseline"])
    assert f'data-evaluator="chrf" data-paired="{other["system"]}"' in page


def test_import_from_the_page_names_errors_and_stores_nothing(staff, study):
    before = MetricScore.objects.count()
    upload = SimpleUploadedFile("bad.csv", b"item,system,score\next-0,sys1,1\next-404,sys1,2\n")
    url = reverse("compare-import", args=[study.slug]) + "?bootstrap=50"
    response = staff.post(url, {"file": upload, "name": "new", "orientation": "higher"})
    assert response.status_code == 400
    assert "line 3: item: unknown item id &#x27;ext-404&#x27;" in response.content.decode()
    assert MetricScore.objects.count() == before and not Evaluator.objects.filter(name="new").exists()
    good = SimpleUploadedFile("good.csv", b"item,system,score\next-0,sys1,1\next-1,sys1,2\n")
    response = staff.post(url, {"file": good, "name": "new", "orientation": "lower"})
    assert response.status_code == 302
    assert Evaluator.objects.get(study=study, name="new").higher_is_better is False


def test_api_equals_the_command(study, owner):
    user = owner
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    url = reverse("api-study-compare", args=[study.slug])
    assert url == f"/api/v1/studies/{study.slug}/compare"
    response = api.get(url, {"bootstrap": 100, "seed": 3})
    assert response.status_code == 200
    out = StringIO()
    call_command("compare", study.slug, "--json", "--bootstrap", "100", "--seed", "3", stdout=out)
    assert response.json() == json.loads(out.getvalue())
    only = api.get(url, {"bootstrap": "50", "evaluator": "oracle"}).json()
    assert [e["name"] for e in only["evaluators"]] == ["oracle"]
    assert api.get(url, {"evaluator": "bleu"}).json() == {
        "errors": {"evaluator": ["no scores for bleu; available: oracle, reversed"]}}
    assert api.get(url, {"bootstrap": 0}).status_code == 400
    assert api.get(reverse("api-study-compare", args=["missing"])).status_code == 404


def test_api_is_staff_only(study):
    url = reverse("api-study-compare", args=[study.slug])
    assert APIClient().get(url).status_code in (401, 403)
    user = User.objects.create_user("plain")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert api.get(url).status_code == 403


def test_admin_lists_evaluators_read_only(study, owner, login_as):
    client = login_as(owner)
    page = client.get("/admin/evaluators/evaluator/")
    assert page.status_code == 200 and "oracle" in page.content.decode()
    assert client.get("/admin/evaluators/evaluator/add/").status_code == 403
    assert client.get("/admin/evaluators/metricscore/").status_code == 200


def test_page_explains_dip_eq1_next_to_its_numbers(staff, study):
    scores_import(study=study, file_name="d.csv", content=score_csv(name="pronoun-model", reference=True))
    html = staff.get(reverse("compare-report", args=[study.slug]), {"bootstrap": 50}).content.decode()
    assert "DiP Eq. 1, lower is better" in html  # the column header of its system scores
    assert "Σ over 8 items" in html  # under each summed value
    assert '<h3 id="dip-h">DiP Eq. 1 (lower is better)</h3>' in html and 'href="#dip-h"' in html
    assert "<strong>summed</strong> (not averaged)" in html
    assert "scored different numbers of items" not in html  # every system has 8
    assert "ContraPro accuracy" not in html  # not a contrastive study


def test_page_shows_means_and_t_tests(staff, study):
    html = staff.get(reverse("compare-report", args=[study.slug]), {"bootstrap": 50}).content.decode()
    assert "Mean scores and paired t-tests" in html and "200 resamples" not in html and "50 resamples of items" in html
    # oracle scores 10 − rank: sys3 beats sys4 by 1 on every item (constant difference → t undefined)
    assert 'data-evaluator="oracle" data-pair="sys3|sys4">—<' in html
    # sys1 − sys2 is +1 on 6 items and −1 on the 2 swapped ones
    from scipy import stats
    p = stats.ttest_rel([9, 9, 9, 9, 9, 9, 8, 8], [8, 8, 8, 8, 8, 8, 9, 9]).pvalue
    assert f'data-evaluator="oracle" data-pair="sys1|sys2">{p:.4f}<' in html


def test_page_shows_the_meta_evaluation(staff, study):
    """The WMT meta-evaluation of compare --json's ``meta`` block: both levels and the PERM-BOTH matrix."""
    html = staff.get(reverse("compare-report", args=[study.slug]), {"bootstrap": 100}).content.decode()
    assert "Meta-evaluation as WMT computes it" in html
    section = html.split('id="meta-h"')[1].split("</section>")[0]
    rows = section.split("<tbody>")[1].split("</tbody>")[0]
    assert rows.index("oracle") < rows.index("reversed")  # best first
    assert "<td class=\"num\">1.000</td>" in rows  # the oracle's pairwise accuracy
    assert "PERM-BOTH" in section and "better than" in section


def test_a_large_comparison_links_its_t_tests_williams_tests_and_plots(staff, study, monkeypatch):
    """Above INLINE_DETAIL_ROWS rows the page links to the detail, which shows the same numbers as inline."""
    url = reverse("compare-report", args=[study.slug])
    inline = staff.get(url, {"bootstrap": 50}).content.decode()
    assert 'data-evaluator="oracle" data-pair="sys1|sys2">' in inline and "/compare/t-tests/" not in inline
    monkeypatch.setattr("research.views.compare.INLINE_DETAIL_ROWS", 0)
    linked = staff.get(url, {"bootstrap": 50}).content.decode()
    assert 'data-pair="sys1|sys2"' not in linked and "<svg" not in linked  # tables and plots left out
    base = reverse("compare-detail", args=[study.slug, "t-tests"])
    assert f'hx-get="{base}?evaluator=oracle&amp;bootstrap=50"' in linked and 'hx-trigger="toggle once"' in linked
    fragment = staff.get(base, {"evaluator": "oracle", "bootstrap": 50}, HTTP_HX_REQUEST="true").content.decode()
    row = inline.split('data-pair="sys1|sys2">')[1].split("<")[0]
    assert f'data-pair="sys1|sys2">{row}<' in fragment and "<html" not in fragment  # the same p, table only
    page = staff.get(base, {"evaluator": "oracle", "bootstrap": 50}).content.decode()
    assert "<html" in page and "Paired t-tests of oracle" in page and f'data-pair="sys1|sys2">{row}<' in page
    plot = staff.get(reverse("compare-detail", args=[study.slug, "plot"]),
                     {"evaluator": "oracle", "bootstrap": 50}, HTTP_HX_REQUEST="true").content.decode()
    assert "<svg" in plot and "Human versus oracle system scores" in plot
    assert 'hx-trigger="revealed"' in linked
    williams = staff.get(reverse("compare-detail", args=[study.slug, "williams"]), {"bootstrap": 50}).content.decode()
    assert "Williams (1959)" in williams
    assert staff.get(base, {"evaluator": "nobody", "bootstrap": 50}).status_code == 404
    assert staff.get(reverse("compare-detail", args=[study.slug, "other"])).status_code == 404
    assert staff.get(base, {"evaluator": "oracle", "bootstrap": 0}).status_code == 400
