"""The span-protocol demo: the empty MQM (document) and ESA studies, and the imported WMT21 TED MQM study."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluators.comparison.selectors import study_comparison
from evaluators.models import Evaluator
from evaluators.reports.study_stats import study_report
from studies.demo import studies as demo
from studies.demo.span import WMT_MQM_EVALUATORS, WMT_MQM_FIXTURE, WMT_MQM_SLUG, build_esa_sentences, build_mqm_document
from studies.models import Study


def test_builders_are_in_the_demo_and_keep_the_attribution():
    slugs = [builder()["slug"] for builder in demo.DEMO_STUDIES]
    assert "diabla-mqm-document" in slugs and "diabla-esa" in slugs
    mqm, esa = build_mqm_document(), build_esa_sentences()
    assert mqm["protocol"] == "mqm" and mqm["settings"]["unit"] == "document" and mqm["settings"]["redundancy"] == 2
    assert "taxonomy" not in mqm["settings"]  # the default taxonomy, with its Discourse branch
    assert esa["protocol"] == "esa" and esa["settings"]["unit"] == "sentence" and esa["settings"]["redundancy"] == 2
    for data in (mqm, esa):
        assert "CC BY-SA 4.0" in data["description"]
    for item in mqm["items"]:
        for cand in item["candidates"]:  # a block: one turn a line, the text the lines joined
            assert cand["text"] == "\n".join(cand["sentences"]) and len(cand["sentences"]) == 4
        assert len(item["source_sentences"]) == 4
    readme = (WMT_MQM_FIXTURE.parent / "README.md").read_text()
    assert "Apache License 2.0" in readme and "Freitag" in readme
    assert "Apache License" in (WMT_MQM_FIXTURE.parent / "LICENSE").read_text()


@pytest.mark.django_db
def test_load_demo_span_studies_and_the_imported_mqm_study():
    out = io.StringIO()
    call_command("load_demo", "--base-url", "http://demo.test", "--annotators", "1", stdout=out)
    text = out.getvalue()
    mqm = Study.objects.get(slug="diabla-mqm-document")
    names = [c["name"] for c in mqm.effective_taxonomy()]
    assert "Discourse/Pronoun reference" in names and "Discourse/Connective" in names
    assert mqm.unit == "document" and mqm.redundancy == 2 and mqm.status == "open"
    assert Study.objects.get(slug="diabla-esa").uses_score
    for slug in ("diabla-mqm-document", "diabla-esa"):
        section = text.split(f"Study {slug} ")[1].split("\nStudy ")[0]
        assert "annotator " in section and "http://demo.test/a/" in section

    imported = Study.objects.get(slug=WMT_MQM_SLUG)
    assert imported.protocol == "mqm" and imported.status == "closed"
    assert "Apache-2.0" in imported.description and "Freitag" in imported.description
    assert imported.items.count() == 101
    assert f"http://demo.test{reverse('compare-report', args=[WMT_MQM_SLUG])}" in text
    evaluators = {e.name: e.scores.count() for e in Evaluator.objects.filter(study=imported)}
    assert set(evaluators) == set(WMT_MQM_EVALUATORS) and all(n == 13 * 101 for n in evaluators.values())

    report = study_report(imported, n_boot=50)
    human = {r["system"]: r["score"] for r in report["ranking"]["systems"]}
    result = study_comparison(study=imported, n_boot=50)
    assert result["human"]["score"] == "mqm" and len(result["human"]["systems"]) == 13
    for system, entry in result["human"]["systems"].items():
        assert entry["score"] == pytest.approx(human[system])
    meta = result["meta"]
    assert set(meta["system"]) == set(WMT_MQM_EVALUATORS) and meta["settings"]["n_segments"] == 101
    for name in WMT_MQM_EVALUATORS:  # real figures, not placeholders
        assert 0.0 < meta["system"][name]["pairwise_accuracy"] < 1.0

    again = io.StringIO()
    call_command("load_demo", "--base-url", "http://demo.test", "--annotators", "1", stdout=again)
    assert f"Study {WMT_MQM_SLUG} (already loaded)" in again.getvalue()
    assert Study.objects.filter(slug=WMT_MQM_SLUG).count() == 1
