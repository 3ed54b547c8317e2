"""``import_judgments --format mqm-tsv`` and ``export_judgments --format mqm-tsv``: Google's WMT MQM TSV in and out.

The fixture is the Apache-2.0 subset of the WMT21 TED en-de release
(fixtures/wmt-mqm/README.md); the small files are written here.
"""
from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotator, Assignment, AssignmentStatus, Judgment
from formats.mqm_tsv import read_mqm_tsv
from evaluators.stats import mqm as mqm_stats
from formats import mqm_tsv as mqm_tsv_format
from studies.models import Candidate, Item, Status, Study
from tests.factories import make_study

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"
HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"


def write(tmp_path: Path, rows: list[str], *, header: str = HEADER, name: str = "small.tsv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def run_import(path: Path, *args: str) -> Study:
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "mqm-tsv", *args, stdout=out)
    return Study.objects.get(slug=out.getvalue().strip())


def run_export(slug: str, tmp_path: Path, name: str = "out.tsv") -> Path:
    path = tmp_path / name
    call_command("export_judgments", slug, "--format", "mqm-tsv", "--output", str(path), stderr=io.StringIO())
    return path


def judgments_of(study: Study) -> dict[tuple[str, str], dict[str, list[dict[str, Any]]]]:
    """(rater, item id) -> system -> spans: the stored judgments without pks."""
    systems = dict(Candidate.objects.filter(item__study=study).values_list("pk", "system"))
    out = {}
    for j in Judgment.objects.filter(assignment__item__study=study).select_related("assignment__annotator",
                                                                                   "assignment__item"):
        key = (j.assignment.annotator.external_id, j.assignment.item.external_id)
        out[key] = {systems[int(pk)]: entry["spans"] for pk, entry in j.answer["annotations"].items()}
    return out


def nothing_stored() -> bool:
    return not (Study.objects.exists() or Item.objects.exists() or Judgment.objects.exists()
                or Annotator.objects.exists())


def import_errors(path: Path, *args: str) -> str:
    with pytest.raises(CommandError) as exc:
        run_import(path, *args)
    assert nothing_stored()
    return str(exc.value)


# --- the release subset ---------------------------------------------------------------------------------------

def test_release_subset_becomes_a_closed_mqm_study(tmp_path):
    study = run_import(FIXTURE, "--unclosed-spans", "close-at-end", "--slug", "ted")
    data = read_mqm_tsv(FIXTURE, unclosed="close_at_end")
    assert (study.protocol, study.status, study.unit, study.spam_rate) == ("mqm", Status.CLOSED, "sentence", 0.0)
    assert study.items.count() == len(data.item_keys()) == 101
    assert Candidate.objects.filter(item__study=study).count() == len(data.segments)
    assert set(Candidate.objects.filter(item__study=study, is_reference=True).values_list("system", flat=True)) \
        == {"ref"}
    assert set(study.annotators.values_list("external_id", flat=True)) == {"rater1", "rater2", "rater3", "rater4"}
    pairs = {(j.rater, data.segments[j.segment].doc, data.segments[j.segment].global_seg_id) for j in data.judgments}
    assert Judgment.objects.filter(assignment__item__study=study).count() == len(pairs)
    assert not Assignment.objects.filter(item__study=study).exclude(status=AssignmentStatus.DONE).exists()
    assert not Item.objects.filter(study=study, is_open=True).exists()
    per_item = pd.Series([(d, s) for _, d, s in pairs]).value_counts()
    assert study.redundancy == per_item.max()
    assert study.severities == ["minor", "major"]
    assert {c["name"] for c in study.taxonomy} == {e.category for j in data.judgments for e in j.errors}
    assert "format mqm-tsv" in study.description and "Reference systems: ref." in study.description
    assert hashlib.sha256(FIXTURE.read_bytes()).hexdigest() in study.description
    assert "runs to the end of the text" in study.description  # the reader's note on line 1,502


def test_spans_are_offsets_into_the_clean_texts(tmp_path):
    study = run_import(FIXTURE, "--unclosed-spans", "close-at-end")
    stored = judgments_of(study)
    # line 4: Nemo, talk.3 segment 218, rater4: "Als Künstlerin ist mir <v>die </v>Verbindung sehr wichtig."
    nemo = stored[("rater4", "talk.3:1:218")]["Nemo"]
    text = Candidate.objects.get(item__study=study, item__external_id="talk.3:1:218", system="Nemo").text
    assert "<v>" not in text
    start = len("Als Künstlerin ist mir ")
    assert {"start": start, "end": start + 4, "side": "target", "severity": "major",
            "category": "Accuracy/Addition"} in nemo
    assert text[start:start + 4] == "die "
    # a rater's judgment holds only the systems he or she rated for that segment
    assert set(stored[("rater4", "talk.3:1:218")]) < set(
        Candidate.objects.filter(item__study=study, item__external_id="talk.3:1:218").values_list("system", flat=True))
    # errors marked in the source column are source spans, offsets into the item's source
    source_spans = [(item, s) for (_, item), systems in stored.items() for spans in systems.values() for s in spans
                    if s["side"] == "source"]
    assert source_spans
    for item_id, span in source_spans:
        source = Item.objects.get(study=study, external_id=item_id).source
        assert 0 <= span["start"] < span["end"] <= len(source) and "<v>" not in source


def test_stored_judgments_give_the_files_mqm_scores(tmp_path):
    """Scoring the stored answers equals scoring the raw file (evaluators.stats.mqm, WMT weights)."""
    study = run_import(FIXTURE, "--unclosed-spans", "close-at-end")
    rows = []
    for (rater, item), systems in judgments_of(study).items():
        for system, spans in systems.items():
            rows += [{"system": system, "segment": item, "rater": rater, "category": "No-error",
                      "severity": "No-error"}] if not spans else [
                {"system": system, "segment": item, "rater": rater, "category": s["category"],
                 "severity": s["severity"]} for s in spans]
    ours = mqm_stats.system_scores(mqm_stats.mqm_segment_scores(pd.DataFrame(rows))).set_index("system")["score"]
    raw = pd.DataFrame(read_mqm_tsv(FIXTURE, unclosed="close_at_end").rows())
    theirs = mqm_stats.system_scores(mqm_stats.mqm_segment_scores(raw)).set_index("system")["score"]
    assert len(ours) == 14
    assert (ours.sort_index() - theirs.sort_index()).abs().max() < 1e-12


def test_without_close_at_end_the_unclosed_marker_is_named_and_nothing_stored():
    message = import_errors(FIXTURE)
    assert "line 1502: target: <v> without </v>" in message
    assert "--unclosed-spans close-at-end" in message


def test_round_trip_import_export_import(tmp_path):
    first = run_import(FIXTURE, "--unclosed-spans", "close-at-end", "--slug", "first")
    exported = run_export("first", tmp_path)
    second = run_import(exported, "--slug", "second")  # the writer closes every span: strict reading works
    assert judgments_of(second) == judgments_of(first)
    assert len(judgments_of(first)) > 300
    for field in ("taxonomy", "severities", "redundancy", "allow_overlap", "protocol", "unit"):
        assert getattr(second, field) == getattr(first, field), field
    same_items = [(i.external_id, i.document_id, i.position, i.source) for i in first.items.order_by("pk")]
    assert [(i.external_id, i.document_id, i.position, i.source) for i in second.items.order_by("pk")] == same_items
    assert set(Candidate.objects.filter(item__study=second, is_reference=True).values_list("system", flat=True)) \
        == {"ref"}
    again = run_export("second", tmp_path, "again.tsv")
    assert again.read_text(encoding="utf-8") == exported.read_text(encoding="utf-8")  # a fixed point
    lines = exported.read_text(encoding="utf-8").splitlines()
    assert lines[0] == HEADER + "\tcomment"  # the raters' comments on "Other" errors are notes, written back
    def comments(text: str) -> list[str]:
        return sorted(ln.split("\t")[9] for ln in text.splitlines()[1:] if ln.split("\t")[9])
    assert comments(exported.read_text(encoding="utf-8")) == comments(FIXTURE.read_text(encoding="utf-8"))
    assert "Locale convention measurement" in comments(FIXTURE.read_text(encoding="utf-8"))
    assert sum(1 for ln in lines if ln.endswith("\tNo-error\tNo-error\t")) == sum(
        1 for ln in FIXTURE.read_text(encoding="utf-8").splitlines() if "\tNo-error\tNo-error" in ln)


# --- hand-made files: the rules -------------------------------------------------------------------------------

def test_rules_for_unmarked_errors_notes_categories_and_severities(tmp_path):
    path = write(tmp_path, [
        "sysA\td1\t1\t10\tr1\tThe cat sat.\tDie <v>Katze</v> saß.\tAccuracy/Mistranslation\tMAJOR\tsee cat",
        "sysA\td1\t1\t10\tr1\tThe cat sat.\tDie Katze saß.\tfluency/grammar\tminor\t",
        "sysB\td1\t1\t10\tr1\tThe <v>cat</v> sat.\tDer saß.\tAccuracy/Omission\tNeutral\t",
        "sysB\td1\t1\t10\tr2\tThe cat sat.\tDer saß.\tFluency/Grammar\tCritical\t",
        "sysA\td1\t2\t11\tr2\tIt ran.\tSie rannte.\tNo-error\tNo-error\t",
    ], header=HEADER + "\tcomment")
    study = run_import(path)
    stored = judgments_of(study)
    assert stored[("r1", "d1:1:10")] == {
        "sysA": [{"start": 0, "end": 14, "side": "target", "whole": True, "severity": "minor",
                  "category": "fluency/grammar"},
                 {"start": 4, "end": 9, "side": "target", "severity": "major",
                  "category": "Accuracy/Mistranslation", "note": "see cat"}],
        "sysB": [{"start": 4, "end": 7, "side": "source", "severity": "neutral", "category": "Accuracy/Omission"}],
    }
    # categories match case-insensitively: the first spelling in the file wins
    assert stored[("r2", "d1:1:10")]["sysB"][0]["category"] == "fluency/grammar"
    assert stored[("r2", "d1:2:11")] == {"sysA": []}
    assert study.severities == ["neutral", "minor", "major", "critical"]
    assert [c["name"] for c in study.taxonomy] == ["Accuracy/Mistranslation", "Accuracy/Omission", "fluency/grammar"]
    assert study.taxonomy[0]["description"].startswith("The target does not")  # known categories keep their text
    assert study.redundancy == 2
    item = Item.objects.get(study=study, external_id="d1:1:10")
    assert (item.document_id, item.position, item.source) == ("d1", 1, "The cat sat.")
    assert item.metadata["mqm_tsv"] == {"doc": "d1", "doc_id": "1", "seg_id": "10"}
    # the export writes the unmarked error without markers, the note in a comment column, severities capitalised
    lines = run_export(study.slug, tmp_path).read_text(encoding="utf-8").splitlines()
    assert lines[0] == HEADER + "\tcomment"
    assert "sysA\td1\t1\t10\tr1\tThe cat sat.\tDie Katze saß.\tfluency/grammar\tMinor\t" in lines
    assert "sysA\td1\t1\t10\tr1\tThe cat sat.\tDie <v>Katze</v> saß.\tAccuracy/Mistranslation\tMajor\tsee cat" in lines
    assert "sysB\td1\t1\t10\tr1\tThe <v>cat</v> sat.\tDer saß.\tAccuracy/Omission\tNeutral\t" in lines
    assert "sysA\td1\t2\t11\tr2\tIt ran.\tSie rannte.\tNo-error\tNo-error\t" in lines


def test_overlapping_spans_set_allow_overlap(tmp_path):
    rows = ["s\td\t1\t1\tr\tA b c.\tX <v>y z</v>.\tStyle/Awkward\tMinor",
            "s\td\t1\t1\tr\tA b c.\tX y <v>z.</v>\tFluency/Punctuation\tMinor"]
    assert run_import(write(tmp_path, rows), "--slug", "o").allow_overlap is True
    assert run_import(write(tmp_path, rows[:1], name="one.tsv"), "--slug", "p").allow_overlap is False


@pytest.mark.parametrize("systems, given, expected", [
    (["ref-A", "Human-B.0", "refine-mt", "human-parity-mt", "sysA"], [], {"ref-A", "Human-B.0"}),
    (["ref.A", "sysA"], [], {"ref.A"}),
    (["ref.A", "sysA"], ["sysA"], {"sysA"}),  # the option replaces detection
    (["sysA", "sysB"], [], set()),
])
def test_reference_systems(tmp_path, systems, given, expected):
    rows = [f"{s}\td\t1\t1\tr\tSrc.\tTgt.\tNo-error\tNo-error" for s in systems]
    study = run_import(write(tmp_path, rows), *[a for g in given for a in ("--reference-system", g)])
    assert set(Candidate.objects.filter(item__study=study, is_reference=True).values_list("system", flat=True)) \
        == expected
    assert f"Reference systems: {', '.join(sorted(expected, key=systems.index)) or 'none'}." in study.description


def test_unknown_reference_system_is_refused(tmp_path):
    message = import_errors(write(tmp_path, ["sysA\td\t1\t1\tr\tS.\tT.\tNo-error\tNo-error"]),
                            "--reference-system", "Human-A.0")
    assert "--reference-system: 'Human-A.0' is not a system of small.tsv (its systems: sysA)" in message


# --- bad rows: named by line, nothing stored --------------------------------------------------------------------

GOOD = "sysA\td\t1\t1\tr1\tThe cat.\tDie <v>Katze</v>.\tAccuracy/Mistranslation\tMajor"


@pytest.mark.parametrize("bad, expected", [
    ("sysA\td\t1\t2\tr1\tThe dog.\tDer Hund.\tNo-error", "line 3: 8 tab-separated fields, expected 9"),
    ("sysA\td\t1\t2\tr1\tThe dog.\tDer <v>Hund.\tStyle/Awkward\tMinor", "line 3: target: <v> without </v>"),
    ("sysA\td\t1\t2\tr1\tThe dog.\tDer <v>Hund</v>.\tStyle/Awkward\tSevere",
     "line 3: severity 'Severe' is not an MQM severity"),
    ("sysA\td\t1\t2\t\tThe dog.\tDer <v>Hund</v>.\tStyle/Awkward\tMinor", "line 3: empty rater"),
    ("\td\t1\t2\tr1\tThe dog.\tDer Hund.\tNo-error\tNo-error", "line 3: empty system"),
    ("sysA\td\t1\t2\tr1\tThe dog.\tDer <v>Hund</v>.\t\tMinor", "line 3: empty category"),
    ("sysA\td\t1\t2\tr1\tThe dog.\t<v>Der</v> <v>Hund</v>.\tStyle/Awkward\tMinor",
     "line 3: 2 stretches marked <v>…</v>; one error row marks one span"),
    ("sysB\td\t1\t1\tr1\tThe cats.\tDie Katzen.\tNo-error\tNo-error",
     "line 3: source differs from line 2 for the same doc, doc_id and seg_id"),
    ("sysA\td\t1\t2\tr1\tThe dog.\t \tNo-error\tNo-error", "line 3: target: empty"),
])
def test_one_bad_row_is_named_and_nothing_is_stored(tmp_path, bad, expected):
    message = import_errors(write(tmp_path, [GOOD, bad, GOOD.replace("\t1\t1\t", "\t2\t3\t")]))
    assert expected in message
    assert "nothing stored" in message
    assert "line 2" not in message.replace("from line 2", "")  # the good rows are not blamed


def test_every_bad_row_is_listed(tmp_path):
    rows = [GOOD, GOOD.replace("Major", "Huge"), GOOD.replace("\tr1\t", "\tr2\t").replace("Major", "Tiny")]
    message = import_errors(write(tmp_path, rows))
    assert "line 3: severity 'Huge'" in message and "line 4: severity 'Tiny'" in message


def test_existing_slug_is_refused(tmp_path):
    make_study(slug="taken")
    with pytest.raises(CommandError, match="a study 'taken' exists already"):
        run_import(write(tmp_path, [GOOD]), "--slug", "taken")
    assert Study.objects.count() == 1


# --- export refusals -------------------------------------------------------------------------------------------

def test_export_refuses_other_protocols_and_history(tmp_path):
    make_study(slug="rank")
    with pytest.raises(CommandError, match="only an mqm study"):
        run_export("rank", tmp_path)
    run_import(write(tmp_path, [GOOD]), "--slug", "m")
    with pytest.raises(CommandError, match="--history: the mqm-tsv format holds current judgments only"):
        call_command("export_judgments", "m", "--format", "mqm-tsv", "--history", stdout=io.StringIO())


def test_no_error_marker_is_the_same_in_both_modules():
    assert mqm_tsv_format.NO_ERROR == mqm_stats.NO_ERROR
    for value in ("No-error", "no error", "NO_ERROR", " no-Error ", "Minor", "error", ""):
        assert mqm_tsv_format.is_no_error(value) == mqm_stats.is_no_error(value), value


def test_a_study_annotated_here_exports_and_imports_back(tmp_path):
    """A native mqm study (answers through the services) -> mqm-tsv -> import: the same spans per rater and system."""
    from annotation.items.selectors import ordered_candidates
    from annotation.handout.services import annotators_create, assignment_next, judgment_submit

    study = make_study(slug="native", protocol="mqm", n_items=2, n_candidates=2,
                       settings={"redundancy": 1, "show_source": True})
    annotator = annotators_create(study=study)[0]
    while (assignment := assignment_next(annotator=annotator)) is not None:
        cands = ordered_candidates(assignment)
        judgment_submit(assignment=assignment, payload={"annotations": {
            cands[0].public_id: {"spans": [{"start": 5, "end": 6, "side": "target", "severity": "major",
                                            "category": "Accuracy/Mistranslation", "note": "two\nlines"},
                                           {"start": 0, "end": 6, "side": "source", "severity": "minor",
                                            "category": "Accuracy/Omission"}]},
            cands[1].public_id: {"spans": []}}})
    text = run_export("native", tmp_path).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == HEADER + "\tcomment"
    assert len(lines) == 1 + 2 * 3  # per item: two error rows for one candidate, a No-error row for the other
    code = annotator.code
    marked = [ln for ln in lines if "\tAccuracy/Mistranslation\t" in ln]
    assert len(marked) == 2 and all(f"\t{code}\t" in ln for ln in marked)
    assert all("\tMajor\ttwo lines" in ln for ln in marked)  # the note's line break became a space
    assert any(ln.split("\t")[:4] == [ln.split("\t")[0], "ext-0", "0", "ext-0"] for ln in marked)
    assert "\t<v>Quelle</v> 0.\t" in text  # the source span, marked in the source column
    again = run_import(tmp_path / "out.tsv", "--slug", "again")
    mine = {(item, system): spans for (_, item), systems in judgments_of(again).items()
            for system, spans in systems.items()}
    native = {}
    for j in Judgment.objects.filter(assignment__item__study=study).select_related("assignment__item"):
        for pk, entry in j.answer["annotations"].items():
            cand = Candidate.objects.get(pk=int(pk))
            spans = [{**s, "note": s["note"].replace("\n", " ")} if "note" in s else s for s in entry["spans"]]
            ext = j.assignment.item.external_id  # no document: doc = the id, doc_id = the position, seg_id = the id
            native[(f"{ext}:0:{ext}", cand.system)] = spans
    assert mine == native


def test_a_document_unit_text_is_refused_naming_the_item(tmp_path):
    study = make_study(slug="docs", protocol="mqm", n_items=1, n_candidates=1, settings={"redundancy": 1})
    Candidate.objects.filter(item__study=study).update(text="First sentence.\nSecond sentence.")
    from annotation.items.selectors import ordered_candidates
    from annotation.handout.services import annotators_create, assignment_next, judgment_submit

    assignment = assignment_next(annotator=annotators_create(study=study)[0])
    judgment_submit(assignment=assignment, payload={"annotations": {
        c.public_id: {"spans": []} for c in ordered_candidates(assignment)}})
    with pytest.raises(CommandError, match="item 'ext-0': the text contains a tab or a line break"):
        run_export("docs", tmp_path)


def test_judgments_import_reads_mqm_tsv_too():
    """The Python entry point of every format (judgment_import.judgments_import) routes mqm-tsv as the command does."""
    from annotation.importing.judgments import judgments_import

    content = "\n".join(FIXTURE.read_text(encoding="utf-8").splitlines()[:200]) + "\n"
    study = judgments_import(name=FIXTURE.name, content=content, fmt="mqm-tsv", slug="via-python")
    assert study.protocol == "mqm" and study.status == "closed" and study.items.exists()


def test_an_imported_mqm_study_round_trips_through_the_export_format(tmp_path):
    """mqm-tsv → this tool's CSV export → import --format export: the same spans, unmarked ("whole") errors included."""
    path = write(tmp_path, [
        "sysA\td1\t1\t10\tr1\tThe cat sat.\tDie <v>Katze</v> saß.\tAccuracy/Mistranslation\tMajor\t",
        "sysA\td1\t1\t10\tr1\tThe cat sat.\tDie Katze saß.\tFluency/Grammar\tMinor\t",
        "sysB\td1\t1\t10\tr1\tThe cat sat.\tDer saß.\tNo-error\tNo-error\t",
    ], header=HEADER + "\tcomment")
    study = run_import(path)
    before = judgments_of(study)
    assert any(span.get("whole") for spans in before[("r1", "d1:1:10")].values() for span in spans)
    export = tmp_path / "export.csv"
    call_command("export_judgments", study.slug, "--format", "csv", "--output", str(export), stdout=io.StringIO())
    call_command("import_judgments", str(export), "--format", "export", "--slug", "again", stdout=io.StringIO())
    again = Study.objects.get(slug="again")
    assert {k[1]: v for k, v in judgments_of(again).items()} == {k[1]: v for k, v in before.items()}


# --- document-unit studies: one segment per sentence ----------------------------------------------------------

_BLOCKS = {  # item id -> (document, position, source sentences, {system: sentences})
    "b1": ("dlg-1", 0, ["Bonjour.", "Ça va ?"], {"reference": ["Hello.", "How are you?"],
                                                 "sys1": ["Good day.", "It goes?"]}),
    "b2": ("dlg-1", 1, ["Oui.", "Et toi ?", "Bien."], {"reference": ["Yes.", "And you?", "Fine."],
                                                      "sys1": ["Yes.", "And toi?", "Good."]}),
    "b3": ("dlg-2", 0, ["Merci."], {"reference": ["Thanks."], "sys1": ["Mercy."]}),
}


def _document_study(slug: str, **settings: Any) -> Study:
    from studies.importing.study_file import study_import

    items = [{"id": ext, "document_id": doc, "position": pos, "source": "\n".join(src), "source_sentences": src,
              "candidates": [{"system": system, "text": "\n".join(sents), "sentences": sents,
                              "is_reference": system == "reference"} for system, sents in cands.items()]}
             for ext, (doc, pos, src, cands) in _BLOCKS.items()]
    data = {"slug": slug, "title": "Document MQM", "protocol": "mqm", "items": items,
            "settings": {"unit": "document", "redundancy": 2, "spam_rate": 0.0, "show_source": True, **settings}}
    return study_import(data=data, status="open")


def _judge_document_study(study: Study, spans_of) -> list[Annotator]:
    """Two annotators rate every block; ``spans_of(item id, system)`` gives the spans (as stored, block offsets)."""
    from annotation.items.selectors import ordered_candidates
    from annotation.handout.services import annotators_create, assignment_next, judgment_submit

    annotators = annotators_create(study=study, count=2)
    for annotator in annotators:
        while (assignment := assignment_next(annotator=annotator)) is not None:
            judgment_submit(assignment=assignment, payload={"annotations": {
                c.public_id: {"spans": spans_of(assignment.item.external_id, c.system)}
                for c in ordered_candidates(assignment)}})
    return annotators


def _mark(category: str, start: int, end: int, side: str = "target", severity: str = "major") -> dict[str, Any]:
    return {"start": start, "end": end, "side": side, "severity": severity, "category": category}


def test_a_document_unit_study_exports_one_row_per_sentence_and_imports_back(tmp_path):
    """Document blocks -> Google's TSV, one segment per sentence with the document id -> import -> export again."""
    study = _document_study("doc-mqm")
    # b2/sys1 is "Yes.\nAnd toi?\nGood.": "toi" (9-12) is in sentence 2, "Good" (14-18) in sentence 3;
    # b1's source "Bonjour.\nÇa va ?": "Ça va" (9-14) is sentence 2 of the source.
    marks = {("b2", "sys1"): [_mark("Accuracy/Mistranslation", 9, 12), _mark("Style/Awkward", 14, 18, severity="minor")],
             ("b1", "sys1"): [_mark("Accuracy/Omission", 9, 14, side="source")]}
    _judge_document_study(study, lambda ext, system: marks.get((ext, system), []))
    path = run_export("doc-mqm", tmp_path)
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == HEADER.split("\t")
    body = rows[1:]
    # every (sentence, system, rater): 6 sentences x 2 systems x 2 raters, one row each (one error a sentence here)
    assert len(body) == 6 * 2 * 2
    assert {(r[1], r[2], r[3]) for r in body} == {
        ("dlg-1", "1", "b1.1"), ("dlg-1", "2", "b1.2"), ("dlg-1", "3", "b2.1"), ("dlg-1", "4", "b2.2"),
        ("dlg-1", "5", "b2.3"), ("dlg-2", "1", "b3.1")}  # doc_id numbers the sentences of the whole document
    assert all("\n" not in cell for r in body for cell in r)
    toi = [r for r in body if r[0] == "sys1" and r[3] == "b2.2"]
    assert [(r[5], r[6], r[7], r[8]) for r in toi] == [("Et toi ?", "And <v>toi</v>?", "Accuracy/Mistranslation",
                                                        "Major")] * 2
    good = [r for r in body if r[0] == "sys1" and r[3] == "b2.3"]
    assert {(r[6], r[8]) for r in good} == {("<v>Good</v>.", "Minor")}
    omission = [r for r in body if r[0] == "sys1" and r[3] == "b1.2"]
    assert {(r[5], r[6]) for r in omission} == {("<v>Ça va</v> ?", "It goes?")}
    clean = [r for r in body if r[0] == "sys1" and r[3] == "b2.1"]  # a sentence without a mark was judged clean
    assert {(r[5], r[6], r[7], r[8]) for r in clean} == {("Oui.", "Yes.", "No-error", "No-error")}
    again = run_import(path, "--slug", "doc-again")
    stored = judgments_of(again)
    assert stored[(body[0][4], "dlg-1:4:b2.2")]["sys1"] == [{"start": 4, "end": 7, "side": "target",
                                                               "severity": "major",
                                                               "category": "Accuracy/Mistranslation"}]
    assert stored[(body[0][4], "dlg-1:2:b1.2")]["sys1"] == [{
        "start": 0, "end": 5, "side": "source", "severity": "major", "category": "Accuracy/Omission"}]
    assert stored[(body[0][4], "dlg-1:3:b2.1")] == {"reference": [], "sys1": []}
    # round trip: the imported (sentence-unit) study exports to the same file
    assert run_export("doc-again", tmp_path, "again.tsv").read_text(encoding="utf-8") == \
        path.read_text(encoding="utf-8")


def test_a_span_over_a_sentence_boundary_is_written_once_and_said(tmp_path):
    study = _document_study("doc-cut", allow_overlap=True)
    # b1/reference "Hello.\nHow are you?": 0-10 runs from sentence 1 into sentence 2; 6-7 is the line break alone
    marks = {("b1", "reference"): [_mark("Fluency/Grammar", 0, 10), _mark("Style/Awkward", 6, 7, severity="minor")],
             # "Yes.\nAnd you?\nFine.": 0-5 is "Yes." and its line break only: cut silently, not a crossing
             ("b2", "reference"): [_mark("Fluency/Punctuation", 0, 5, severity="minor")]}
    _judge_document_study(study, lambda ext, system: marks.get((ext, system), []))
    path = tmp_path / "cut.tsv"
    err = io.StringIO()
    call_command("export_judgments", "doc-cut", "--format", "mqm-tsv", "--output", str(path), stderr=err)
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    first = [r for r in rows if r[0] == "reference" and r[3] == "b1.1"]
    assert sorted((r[6], r[7]) for r in first) == sorted([("<v>Hello.</v>", "Fluency/Grammar"),
                                                          ("Hello.", "Style/Awkward")] * 2)
    second = [r for r in rows if r[0] == "reference" and r[3] == "b1.2"]
    assert {r[7] for r in second} == {"No-error"}  # the cut span is counted once, in its first sentence
    assert {r[6] for r in rows if r[0] == "reference" and r[3] == "b2.1"} == {"<v>Yes.</v>"}
    message = " ".join(err.getvalue().split())
    assert "2 span(s) run over a sentence boundary (items: b1)" in message
    assert "2 span(s) mark the whole block or only the line break between two sentences (items: b1)" in message


def test_a_document_block_whose_texts_do_not_align_is_refused_naming_it(tmp_path):
    study = _document_study("doc-bad")
    _judge_document_study(study, lambda ext, system: [])
    Candidate.objects.filter(item__study=study, item__external_id="b3", system="sys1").update(
        text="Mercy.\nMore.", sentences=[])
    with pytest.raises(CommandError, match=r"item 'b3': its source and candidates have different numbers of "
                                           r"sentences \(1, 2\)"):
        run_export("doc-bad", tmp_path)
