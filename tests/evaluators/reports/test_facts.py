"""The report's ``facts`` block and the methods paragraph written from it (evaluators/reports/facts.py).

Every clause of the paragraph maps to a fact: flipping the fact changes or removes the clause, for every
protocol and every import format. An MQM TSV shaped like Google's release (one rater per segment, several
per document) gives a paragraph that says so and claims no blinding, order randomisation or timing.
"""
from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pytest
from django.core.management import call_command

from annotation.handout.services import annotators_create
from evaluators.reports import paper
from evaluators.reports import span_report as sr
from evaluators.reports.study_stats import study_report
from studies.models import Study
from tests.evaluators.reports.test_span_report import answer_all as span_answer_all
from tests.evaluators.reports.test_span_report import esa_plan, mqm_plan, span_study
from tests.factories import make_study
from tests.report_study import answer_all, choice_study, ranking_study

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]  # imports are owned by the only superuser


def paragraph(report: dict, **changes: Callable[[dict], None]) -> str:
    """The paragraph of ``report`` after applying ``changes`` to a copy of its facts."""
    changed = copy.deepcopy(report)
    for change in changes.values():
        change(changed["facts"])
    return paper.methods_paragraph(changed)


# ---------------------------------------------------------------- one study per protocol
def _judgment_study() -> Study:
    study = make_study(slug="jd", protocol="judgment", n_items=6, n_candidates=1,
                       settings={"labels": ["correct", "wrong"], "redundancy": 2, "spam_rate": 0.2})
    answer_all(study, annotators_create(study=study, count=2))
    return study


def _choice3_study() -> Study:
    study = make_study(slug="ch3", protocol="choice", n_items=6, n_candidates=3,
                       settings={"options": ["neither", "tie", "invalid"], "redundancy": 2, "spam_rate": 0.0})
    answer_all(study, annotators_create(study=study, count=2))
    return study


def _span(protocol: str, plan: Any, **settings: Any) -> Callable[[], Study]:
    def build() -> Study:
        study = span_study(f"facts-{protocol}-{len(settings)}", protocol, **settings)
        span_answer_all(study, plan)
        return study
    return build


def _da_plan(k: int, item: str, system: str) -> dict:
    return {"score": esa_plan(k, item, system)["score"]}


PROTOCOLS: dict[str, Callable[[], Study]] = {
    "ranking": lambda: ranking_study(slug="facts-rk", n_items=6, n_annotators=2),
    "choice": _choice3_study,
    "judgment": _judgment_study,
    "pairwise": lambda: choice_study(slug="facts-pw", n_items=6),  # a reference and one system: a pairwise preference
    "mqm": _span("mqm", mqm_plan),
    "esa": _span("esa", esa_plan),
    "da": _span("esa", _da_plan, esa_spans=False),
}


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def change(facts: dict) -> None:
        *parents, last = path.split(".")
        node = facts
        for key in parents:
            node = node[key]
        node[last] = value
    return change


#: (fact changed, value, a clause the native paragraph has, what the changed paragraph has instead or None)
FLIPS = [
    ("recorded.blinding", None, "system names hidden", "Not recorded: whether system names were hidden"),
    ("recorded.order_randomised", None, "candidate order randomised per annotator", "in which order the candidates"),
    ("recorded.order_randomised", "per annotator and document", "randomised per annotator",
     "randomised per annotator and document"),
    ("recorded.timing.min_seconds", 7.5, "answers faster than", "answers faster than 7.5 s were flagged"),
    ("recorded.timing.min_seconds", None, "answers faster than", "no answer times were recorded"),
    ("recorded.timing", None, "answers faster than", "answer times were not recorded"),
    ("n_annotators", 17, "in all", "17 annotators in all"),
    ("n_excluded", 1, "no annotator was excluded", "1 annotator was excluded"),
    ("redundancy", 9, "", "(the study asks for 9 per item)"),
    ("n_items", 4321, "items and", "The study had 4321 items"),
    ("references", ["HUMAN-X"], "", "including the human reference HUMAN-X"),
    ("recorded.controls.auto_exclude_share", 0.4, "", "annotators failing more than 40% of the controls"),
    ("selection", {"method": "metric_var", "metric": "chrF", "similarity": None, "seed": None, "budget": "3",
                   "n_kept": 3, "n_total": 8, "n_systems": 2, "kept_sha256": "0" * 64,
                   "scores": {"source": "file", "file": "s.csv", "sha256": "1" * 64, "reference": None},
                   "source": "subset2evaluate; Zouhar et al., 2025"},
     "", "The 3 items were selected from 8 by metric_var on chrF scores from the file s.csv (subset2evaluate; "
         "Zouhar et al., 2025): the items on which the systems' scores vary most first."),
    ("collection", {"how": "imported", "format": "export", "format_name": "FORMAT-N", "file": "F.csv",
                    "source": "SOURCE-S", "sha256": None, "imported_at": None},
     "We collected human judgments with", "they come from SOURCE-S (the file F.csv, in FORMAT-N)"),
]


@pytest.fixture(scope="module", params=list(PROTOCOLS))
def native(request, django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        before = _row_ids()
        study = PROTOCOLS[request.param]()
        report = study_report(study, n_boot=20)
        yield request.param, report
        Study.objects.filter(pk=study.pk).delete()
        for model, ids in _row_ids().items():  # outside any test's transaction: leave no row behind (audit events, users)
            model._default_manager.filter(pk__in=ids - before.get(model, set())).delete()


def _row_ids() -> dict[Any, set[Any]]:
    from django.apps import apps

    return {model: set(model._default_manager.values_list("pk", flat=True)) for model in apps.get_models()}


def test_native_facts_record_the_design(native):
    name, report = native
    facts = report["facts"]
    assert facts["collection"]["how"] == "native" and facts["collection"]["file"] is None
    recorded = facts["recorded"]
    assert recorded["blinding"] is True and recorded["order_randomised"] == "per annotator"
    assert recorded["timing"]["n_timed"] == recorded["timing"]["n_judgments"] > 0
    item = facts["raters_per_item"]
    assert item["min"] <= item["median"] <= item["max"] <= facts["n_annotators"]
    text = paper.methods_paragraph(report)
    assert "We collected human judgments with" in text and "Not recorded" not in text


@pytest.mark.parametrize("path,value,before,after", FLIPS, ids=[f"{f[0]}={f[1]!r}"[:40] for f in FLIPS])
def test_each_clause_follows_its_fact(native, path, value, before, after):
    _, report = native
    original = paper.methods_paragraph(report)
    if before:
        assert before in original
    changed = paragraph(report, change=_set(path, value))
    assert changed != original
    assert after in changed
    if path == "recorded.blinding":
        assert "system names hidden" not in changed and "hidden control" not in changed


SELECTED = {"method": "metric_avg", "metric": "chrf", "similarity": None, "seed": None, "budget": "50%",
            "n_kept": 4, "n_total": 9, "n_systems": 2, "kept_sha256": "0" * 64, "source": "SRC",
            "scores": {"source": "computed", "file": None, "sha256": None, "reference": "REF"}}


def test_the_selection_sentence_follows_each_recorded_method(native):
    _, report = native
    assert report["facts"]["selection"] is None and "were selected from" not in paper.methods_paragraph(report)
    computed = paragraph(report, a=_set("selection", SELECTED))
    assert ("The 4 items were selected from 9 by metric_avg on chrf scores of the candidates against each item's "
            "reference (sacrebleu, sentence level, computed at import) (SRC): the items with the lowest mean score "
            "over the systems first.") in computed
    drawn = paragraph(report, a=_set("selection", {**SELECTED, "method": "random", "metric": None, "seed": 7,
                                                   "scores": {"source": None}}))
    assert "The 4 items were selected from 9 at random (seed 7) (SRC)." in drawn and "chrf" not in drawn
    diverse = paragraph(report, a=_set("selection", {**SELECTED, "method": "diversity", "metric": None,
                                                     "similarity": "bleu", "scores": {"source": "texts"}}))
    assert "by diversity (SRC): the items whose candidates' texts are least alike (sentence BLEU) first." in diverse


def test_a_study_created_on_selected_items_says_so(tmp_path):
    from tests.factories import study_file
    data = study_file(slug="picked", n_items=8, n_candidates=3, settings={"spam_rate": 0.0, "allow_ties": True})
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    call_command("import_study", str(path), "--select", "random", "--budget", "5", "--seed", "3",
                 stdout=io.StringIO(), stderr=io.StringIO())
    study = Study.objects.get(slug="picked")
    answer_all(study, annotators_create(study=study, count=2))
    report = study_report(study, n_boot=20)
    selection = report["facts"]["selection"]
    assert (selection["method"], selection["seed"], selection["n_kept"], selection["n_total"]) == ("random", 3, 5, 8)
    assert report["facts"]["n_items"] == 5
    assert "The 5 items were selected from 8 at random (seed 3) (subset2evaluate; Zouhar et al., 2025)." \
        in paper.methods_paragraph(report)


def test_source_shown_and_controls_follow_their_facts(native):
    name, report = native
    shown = paragraph(report, a=_set("recorded.source_shown", True))
    hidden = paragraph(report, a=_set("recorded.source_shown", False))
    assert "with the source text" in shown and "monolingually, without the source" in hidden
    none = paragraph(report, a=_set("recorded.source_shown", None))
    assert "whether the source text was shown" in none and "source text;" not in none
    with_controls = paragraph(report, a=_set("recorded.controls", {"n_control_items": 5, "kind": "scrambled_candidate",
                                                                   "spam_rate": 0.25, "auto_exclude_share": None}))
    assert "5 control items with a scrambled candidate (25% of items) were mixed in" in with_controls
    no_rate = paragraph(report, a=_set("recorded.controls", {"n_control_items": 5, "kind": "from_file",
                                                             "spam_rate": None, "auto_exclude_share": None}))
    assert "the file marks 5 items as control copies" in no_rate and "% of items" not in no_rate
    without = paragraph(report, a=_set("recorded.controls", {"n_control_items": 0, "kind": None, "spam_rate": None,
                                                             "auto_exclude_share": None}))
    assert "control items" not in without.split("Inter-annotator")[0]


def test_raters_per_item_and_document_follow_their_facts(native):
    name, report = native
    spread = {"min": 1, "median": 2, "max": 5, "n": 3}
    text = paragraph(report, a=_set("raters_per_item", spread), b=_set("raters_per_segment", spread))
    assert "2 annotators (median; 1–5)" in text
    doc = paragraph(report, a=_set("raters_per_document", {"min": 3, "median": 3.5, "max": 4, "n": 2}))
    assert "each document by 3.5 annotators (median; 3–4)" in doc
    empty = paragraph(report, a=_set("raters_per_item", None), b=_set("raters_per_segment", None),
                      c=_set("raters_per_document", None))
    assert "no item has been judged yet" in empty
    one = {"min": 1, "median": 1, "max": 1, "n": 3}
    single = paragraph(report, a=_set("raters_per_item", one), b=_set("raters_per_segment", one))
    assert "Inter-annotator agreement cannot be computed" in single and "Gwet's AC1 =" not in single
    assert "Gwet's AC1 =" in paper.methods_paragraph(report)


# ---------------------------------------------------------------- the ranking demo's paragraph
def test_the_paragraph_counts_the_raters_it_has_not_the_redundancy_asked_for():
    study = make_study(slug="demo-rank", protocol="ranking", n_items=4, n_candidates=3,
                       settings={"redundancy": 3, "spam_rate": 0.0, "allow_ties": True})
    answer_all(study, annotators_create(study=study, count=2))
    report = study_report(study, n_boot=20)
    assert report["facts"]["raters_per_item"] == {"min": 2, "median": 2, "max": 2, "n": 4}
    text = paper.methods_paragraph(report)
    assert "each item was judged by 2 annotators (the study asks for 3 per item), 2 annotators in all" in text
    assert "judged by 3 annotators" not in text


def test_bradley_terry_strengths_are_the_same_in_text_and_tables():
    study = ranking_study(n_items=6, n_annotators=2)
    report = study_report(study, n_boot=20)
    text = paper.methods_paragraph(report)
    latex = paper.table(report, "ranking", "latex")
    body = latex.split("\\midrule")[1].split("\\bottomrule")[0]
    rows = [line.rstrip(" \\").split(" & ") for line in body.strip().splitlines()]
    for s, row in zip(report["ranking"]["systems"], rows):
        bt = f"{s['bt']:.2f}"
        assert row[1] == s["system"] and row[4] == bt.replace("-", "-")
        assert f"{s['system']} ({s['expected_wins']:.3f}, {bt})" in text
        assert row[0].split(" ")[0] == str(s["position"])
    assert "by Bradley–Terry strength" in text and report["ranking"]["rank_by"] == "bt"


# ---------------------------------------------------------------- position beside rank_range
def test_position_is_the_place_by_score_and_rank_is_the_same():
    # Four systems whose scores differ a little against a large spread: no significant win, wide rank ranges.
    rows = [{"system": s, "item": f"i{i}", "annotator": "a", "score": 10 + d + 15 * ((i * 7 + k) % 5)}
            for i in range(6) for k, (s, d) in enumerate((("A", 3), ("B", 2), ("C", 1), ("D", 0)))]
    block = sr.ranking_block(pd.DataFrame(rows), "esa", sr.weights_from(None), references=set(), seed=0, n_boot=10)
    systems = block["systems"]
    assert [s["score"] for s in systems] == sorted((s["score"] for s in systems), reverse=True)
    assert [s["position"] for s in systems] == [1, 2, 3, 4] == [s["rank"] for s in systems]
    assert all(s["rank_range"][0] <= s["position"] <= s["rank_range"][1] for s in systems)
    assert any(s["rank_range"][0] != s["position"] for s in systems)  # rank used to be the range's lower end


# ---------------------------------------------------------------- imports
HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"


def google_like_tsv() -> str:
    """Two documents of two segments, three systems; each (segment, system) rated by one rater, 3-4 per document."""
    rows, seg = [], 0
    plan = {"talk.1": {"sysA": ["rater1", "rater2"], "sysB": ["rater2", "rater3"], "ref": ["rater3", "rater1"]},
            "talk.2": {"sysA": ["rater4", "rater1"], "sysB": ["rater2", "rater3"], "ref": ["rater1", "rater4"]}}
    for doc, systems in plan.items():
        for k in range(2):
            seg += 1
            for system, raters in systems.items():
                error = ("Accuracy/Mistranslation", "Major") if system == "sysB" else ("No-error", "No-error")
                rows.append("\t".join([system, doc, str(k + 1), str(seg), raters[k], f"Source {seg}.",
                                       f"Target {seg} {system}.", *error]))
    return "\n".join([HEADER, *rows]) + "\n"


def import_file(tmp_path: Path, name: str, content: str, fmt: str, *args: str) -> Study:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", fmt, *args, stdout=out, stderr=io.StringIO())
    return Study.objects.get(slug=out.getvalue().strip())


def test_a_google_like_mqm_tsv_gives_one_rater_per_segment_and_claims_nothing_unrecorded(tmp_path):
    study = import_file(tmp_path, "mqm_newstest_ende.tsv", google_like_tsv(), "mqm-tsv",
                        "--source", "Google's WMT21 MQM release (newstest2021 en-de)")
    assert study.provenance["format"] == "mqm-tsv" and study.provenance["file"] == "mqm_newstest_ende.tsv"
    report = study_report(study, n_boot=20)
    facts = report["facts"]
    assert facts["collection"]["how"] == "imported" and facts["collection"]["source"].startswith("Google's WMT21")
    assert facts["raters_per_segment"] == {"min": 1, "median": 1, "max": 1, "n": 12}
    assert facts["raters_per_document"]["min"] == 3 and facts["raters_per_document"]["max"] == 4
    recorded = facts["recorded"]
    assert recorded["blinding"] is None and recorded["order_randomised"] is None and recorded["source_shown"] is None
    assert recorded["timing"] == {"n_judgments": recorded["timing"]["n_judgments"], "n_timed": 0, "min_seconds": None}
    assert facts["redundancy"] is None
    text = paper.methods_paragraph(report)
    assert "they come from Google's WMT21 MQM release (newstest2021 en-de) (the file mqm_newstest_ende.tsv" in text
    assert "each segment (item × candidate) was rated by 1 annotator" in text
    assert "each document by 3 annotators" not in text and re.search(r"each document by \S+ annotators \(median; 3–4\)",
                                                                     text)
    for claim in ("system names were hidden and", "system names hidden", "randomised", "faster than", "hidden control",
                  "We collected", "slider", "asks for"):
        assert claim not in text, claim
    assert "Not recorded: whether system names were hidden" in text and "no answer times were recorded" in text
    # one rater per segment: agreement is undefined, and the paragraph says why instead of printing n/a
    assert "Inter-annotator agreement cannot be computed: every segment (item × candidate) was rated by one" in text
    assert "Gwet's AC1 = n/a" not in text
    # the text report says the same
    out = io.StringIO()
    call_command("agreement", study.slug, "--bootstrap", "20", stdout=out)
    assert "judgments: imported from mqm_newstest_ende.tsv (format mqm-tsv; source: Google's WMT21" in out.getvalue()
    assert "per segment 1/1/1" in out.getvalue() and "system names hidden not recorded" in out.getvalue()
    # the page's "For a paper" box is the same paragraph
    assert paper.methods_paragraph(json.loads(json.dumps(report))) == text


def test_without_a_source_the_paragraph_names_the_file_and_its_format(tmp_path):
    study = import_file(tmp_path, "ratings.tsv", google_like_tsv(), "mqm-tsv")
    text = paper.methods_paragraph(study_report(study, n_boot=20))
    assert ("imported into it from the file ratings.tsv, in the TSV format of Google's WMT MQM human evaluation "
            "release; where the file came from was not recorded") in text


SCORES = "annotator,system,segment,score,document\nann1,sysA,s1,70,d1\nann1,sysB,s1,55,d1\nann2,sysA,s2,40,d2\n" \
         "ann2,sysB,s2,60,d2\n"
APPRAISE = ("u1,sysA,1,TGT,eng,deu,70,1700000000.5,1700000010.0\nu1,sysB,1,TGT,eng,deu,50,1700000011,1700000020\n"
            "u2,sysA,2,TGT,eng,deu,30,1700000100,1700000105\nu2,sysB,2,TGT,eng,deu,35,1700000100,1700000105\n")
MTME = "sysA\t-1.0\nsysB\t-5.5\nsysA\t-3\nsysB\t0\n"


def _export_of_a_native_study(tmp_path: Path) -> str:
    study = ranking_study(slug="to-export", n_items=4, n_annotators=2)
    path = tmp_path / "export.csv"
    call_command("export_judgments", study.slug, format="csv", output=str(path), stderr=io.StringIO())
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt,name,args", [
    ("export", "export.csv", ()), ("scores", "scores.csv", ()), ("appraise-csv", "appraise.csv", ()),
    ("mtme", "en-de.mqm.seg.score", ("--scale=-25:0",)), ("mqm-tsv", "google.tsv", ()),
])
def test_every_import_format_records_its_provenance_and_the_paragraph_claims_only_that(tmp_path, fmt, name, args):
    content = {"export": lambda: _export_of_a_native_study(tmp_path), "scores": lambda: SCORES,
               "appraise-csv": lambda: APPRAISE, "mtme": lambda: MTME, "mqm-tsv": google_like_tsv}[fmt]()
    study = import_file(tmp_path, name, content, fmt, "--slug", f"imp-{fmt}", *args)
    report = study_report(study, n_boot=20)
    facts = report["facts"]
    assert facts["collection"]["how"] == "imported" and facts["collection"]["format"] == fmt
    assert facts["collection"]["file"] == name and len(facts["collection"]["sha256"]) == 64
    assert facts["recorded"]["blinding"] is None and facts["recorded"]["order_randomised"] is None
    text = paper.methods_paragraph(report)
    assert f"imported into it from the file {name}, in {facts['collection']['format_name']}" in text
    assert "system names hidden" not in text and "randomised" not in text and "We collected" not in text
    assert "Not recorded: whether system names were hidden" in text
    timed = facts["recorded"]["timing"]["n_timed"]
    # answer times: the export and Appraise's file carry them, the others do not
    assert (timed > 0) == (fmt in ("export", "appraise-csv"))
    assert ("answers faster than" in text) == (timed > 0)
    # flipping the collection back to native changes the opening only
    native = paragraph(report, a=_set("collection.how", "native"))
    assert native.startswith("We collected human judgments with")


def test_a_legacy_import_gets_its_provenance_back_from_the_description():
    import importlib

    from django.apps import apps

    migration = importlib.import_module("studies.migrations.0015_facts_study_provenance")
    sentence = ("Reference systems: ref.\n\nImported with import_judgments from old.tsv (format mqm-tsv; sha256 "
                + "a" * 64 + "; 10 rows, {n} judgments) on 2026-01-02 03:04:05 UTC.")
    imported, copied = make_study(slug="legacy"), make_study(slug="legacy-copy")
    Study.objects.filter(pk=imported.pk).update(description=sentence.format(n=0), provenance={})
    # a copy of an imported study: the description came along, the judgments (none yet) are its own
    Study.objects.filter(pk=copied.pk).update(description=sentence.format(n=4), provenance={})
    migration.backfill(apps, None)
    imported.refresh_from_db()
    copied.refresh_from_db()
    assert imported.provenance["how"] == "imported" and imported.provenance["file"] == "old.tsv"
    assert imported.provenance["format"] == "mqm-tsv"
    assert imported.provenance["imported_at"] == "2026-01-02T03:04:05+00:00"
    assert copied.provenance == {}


def test_a_copy_of_an_imported_study_is_not_imported(tmp_path):
    from studies.lifecycle.invariants import study_copy

    study = import_file(tmp_path, "google.tsv", google_like_tsv(), "mqm-tsv")
    assert study.provenance["how"] == "imported"
    assert study_copy(study=study, slug="google-copy").provenance == {}


def test_the_report_pages_paper_box_is_the_facts_paragraph(tmp_path, client, admin_user):
    study = import_file(tmp_path, "google.tsv", google_like_tsv(), "mqm-tsv", "--source", "Google's WMT21 release")
    client.force_login(admin_user)
    page = client.get(f"/reports/{study.slug}/?bootstrap=20").content.decode()
    box = page.split('id="methods-paragraph"')[1].split("</textarea>")[0]
    assert "they come from Google&#x27;s WMT21 release (the file google.tsv" in box
    assert "Not recorded: whether system names were hidden" in box and "randomised" not in box


def test_a_report_without_facts_claims_nothing_about_collection(native):
    _, report = native
    text = paper.methods_paragraph({k: v for k, v in report.items() if k != "facts"})
    assert "how they were collected is not recorded" in text and "system names hidden" not in text
