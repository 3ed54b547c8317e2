"""``import_judgments --format scores|appraise-csv|mtme``, and ESA/MQM exports through ``--format export``."""
from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotator, Assignment, Judgment
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Candidate, Item, Study
from tests.annotation.test_import_judgments import export, report, same
from tests.factories import make_study, study_file
from tests.report_study import report_numbers

# The imports are owned by the server's only superuser (no --user; docs/access.md).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("admin_user")]

SCORES = """annotator,system,segment,score,document,source,target,reference
ann1,sysA,s1,70,d1,Hello.,Hallo.,Hallo!
ann1,sysB,s1,55.5,d1,,Servus.,
ann2,sysA,s1,80,d1,,,
ann1,sysA,s2,40,d2,Bye.,Tschüss.,
ann2,human,s2,90,d2,,,
"""

APPRAISE = """u1,sysA,1,TGT,eng,deu,70,1700000000.5,1700000010.0
u1,sysB,1,TGT,eng,deu,50,1700000011,1700000020
u1,sysA,1,BAD,eng,deu,10,1700000021,1700000025
u1,ref.de,1,REF,eng,deu,95,1700000026,1700000030
u1,sysA,1,CHK,eng,deu,68,1700000031,1700000035
u2,sysA,2,TGT,eng,deu,30,1700000100,1700000105
u2,sysB,2,TGT,eng,deu,30,1700000100,1700000105
"""

MTME = "sysA\t-1.0\nsysB\t-5.5\nsysA\tNone\nsysB\t0\nsysA\t-25\nsysB\t-2\n"


def run(tmp_path: Path, name: str, content: str, fmt: str, *args: str) -> Study:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", fmt, *args, stdout=out)
    return Study.objects.get(slug=out.getvalue().strip())


def answers(study: Study) -> dict[tuple[str, str], dict[str, float]]:
    """{(annotator name, item id): {system: score}} from the stored answers, and each answer's shape checked."""
    out: dict[tuple[str, str], dict[str, float]] = {}
    systems = dict(Candidate.objects.filter(item__study=study).values_list("pk", "system"))
    for j in Judgment.objects.filter(assignment__item__study=study).select_related("assignment__annotator",
                                                                                    "assignment__item"):
        annotations = j.answer["annotations"]
        assert set(j.answer) == {"annotations"} and list(annotations) == sorted(annotations, key=int)
        assert all(entry["spans"] == [] and set(entry) == {"spans", "score"} for entry in annotations.values())
        out[(j.assignment.annotator.external_id, j.assignment.item.external_id)] = {
            systems[int(pk)]: entry["score"] for pk, entry in annotations.items()}
    return out


def _agreement(slug: str) -> str:
    out = io.StringIO()
    call_command("agreement", slug, json=True, stdout=out)
    return out.getvalue()


def nothing_stored(before: tuple[int, int, int]) -> bool:
    return (Study.objects.count(), Annotator.objects.count(), Judgment.objects.count()) == before


def counts() -> tuple[int, int, int]:
    return Study.objects.count(), Annotator.objects.count(), Judgment.objects.count()


def test_scores_file_becomes_a_closed_da_study(tmp_path):
    study = run(tmp_path, "wmt.csv", SCORES, "scores", "--slug", "sc", "--reference-system", "human")
    assert (study.protocol, study.esa_spans, study.status) == ("esa", False, "closed")
    assert "format scores" in study.description and "sha256" in study.description and "wmt.csv" in study.description
    items = {i.external_id: i for i in study.items.all()}
    assert set(items) == {"s1", "s2"}
    assert (items["s1"].document_id, items["s1"].source, items["s1"].metadata) == ("d1", "Hello.", {"reference": "Hallo!"})
    cands = {(c.item.external_id, c.system): c for c in Candidate.objects.filter(item__study=study)}
    assert cands[("s1", "sysB")].text == "Servus." and cands[("s2", "human")].is_reference
    assert cands[("s2", "human")].text == "(text not in the imported file)" and not cands[("s1", "sysA")].is_reference
    assert set(cands) == {("s1", "sysA"), ("s1", "sysB"), ("s2", "sysA"), ("s2", "human")}
    assert sorted(study.annotators.values_list("external_id", flat=True)) == ["ann1", "ann2"]
    assert answers(study) == {("ann1", "s1"): {"sysA": 70, "sysB": 55.5}, ("ann2", "s1"): {"sysA": 80},
                              ("ann1", "s2"): {"sysA": 40}, ("ann2", "s2"): {"human": 90}}
    assert set(Assignment.objects.filter(item__study=study).values_list("status", flat=True)) == {"done"}
    assert study.redundancy == 2 and not study.items.filter(is_open=True).exists()
    assert assignment_next(annotator=annotators_create(study=study)[0]) is None  # nothing handed out


def test_appraise_rows_become_judgments_reference_and_control_copies(tmp_path):
    study = run(tmp_path, "appraise.csv", APPRAISE, "appraise-csv", "--slug", "ap")
    assert (study.source_language, study.target_language, study.esa_spans) == ("eng", "deu", False)
    items = {i.external_id: i for i in study.items.all()}
    assert set(items) == {"1", "2", "1~spam", "1~chk"}
    assert items["1~spam"].is_spam and items["1~spam"].spam_of == items["1"]
    assert items["1~chk"].is_spam and items["1~chk"].spam_of == items["1"]
    assert study.n_spam_items == 2
    flags = {(c.item.external_id, c.system): (c.is_reference, c.is_spam) for c in
             Candidate.objects.filter(item__study=study)}
    assert flags == {("1", "sysA"): (False, False), ("1", "sysB"): (False, False), ("1", "ref.de"): (True, False),
                     ("2", "sysA"): (False, False), ("2", "sysB"): (False, False),
                     ("1~spam", "sysA"): (False, True), ("1~chk", "sysA"): (False, False)}
    assert answers(study) == {("u1", "1"): {"sysA": 70, "sysB": 50, "ref.de": 95}, ("u1", "1~spam"): {"sysA": 10},
                              ("u1", "1~chk"): {"sysA": 68}, ("u2", "2"): {"sysA": 30, "sysB": 30}}
    first = Judgment.objects.get(assignment__item=items["1"])
    assert first.started_at == datetime.fromtimestamp(1700000000.5, tz=timezone.utc)
    assert first.submitted_at == datetime.fromtimestamp(1700000030, tz=timezone.utc)
    assert first.duration_ms == 9500 + 9000 + 4000  # the time spent on its three Appraise items
    # One Appraise result shown for two systems (identical outputs, "sysA+sysB") is counted once.
    assert Judgment.objects.get(assignment__item=items["2"]).duration_ms == 5000
    order = list(Assignment.objects.filter(annotator__external_id="u1", item__study=study)
                 .order_by("sequence").values_list("item__external_id", flat=True))
    assert order == ["1", "1~spam", "1~chk"]
    # The study report ranks the systems on the real items only: sysA's 50 = mean(70, 30); its BAD (10) and
    # CHK (68) scores are controls, and the reference is listed with its flag.
    ranking = {s["system"]: s for s in json.loads(_agreement("ap"))["ranking"]["systems"]}
    assert (ranking["sysA"]["score"], ranking["sysB"]["score"]) == (50.0, 40.0)
    assert ranking["ref.de"]["is_reference"] and not ranking["sysA"]["is_reference"]


def test_appraise_document_level_rows_drop_document_scores_and_spans(tmp_path):
    rows = ('u1,sysA,7,TGT,eng,deu,60,docA,False,"[{\'start_i\': 0, \'end_i\': 4, \'severity\': \'major\'}]",'
            '1700000000,1700000004\n'
            'u1,sysA,8,TGT,eng,deu,80,docA,False,[],1700000005,1700000006\n'
            'u1,sysA,9,TGT,eng,deu,75,docA,True,,1700000007,1700000009\n')
    rows += 'u1,sysA,7,TGT,eng,deu,50,docB,False,[],1700000010,1700000011\n'  # segments numbered per document
    study = run(tmp_path, "doc.csv", rows, "appraise-csv", "--slug", "apd")
    assert set(study.items.values_list("external_id", "document_id", "position")) == {
        ("docA#7", "docA", 7), ("docA#8", "docA", 8), ("docB#7", "docB", 7)}
    assert "1 whole-document scores dropped" in study.description
    assert "the error spans of 1 rows dropped" in study.description


def test_mtme_file_is_one_pseudo_annotator_with_a_scale(tmp_path):
    with pytest.raises(CommandError, match=re.escape("line 1: score -1 is outside 0–100; give --scale")):
        run(tmp_path, "en-de.mqm.seg.score", MTME, "mtme", "--slug", "mt0")
    study = run(tmp_path, "en-de.mqm.seg.score", MTME, "mtme", "--slug", "mt", "--scale=-25:0",
                "--reference-system", "sysB")
    assert (study.source_language, study.target_language) == ("en", "de")
    assert list(study.annotators.values_list("external_id", flat=True)) == ["mqm"]
    assert answers(study) == {("mqm", "1"): {"sysA": 96, "sysB": 78}, ("mqm", "2"): {"sysB": 100},
                              ("mqm", "3"): {"sysA": 0, "sysB": 92}}
    assert Candidate.objects.get(item__study=study, item__external_id="1", system="sysB").is_reference
    assert "scores mapped linearly from -25..0 onto 0..100" in study.description
    auto = run(tmp_path, "en-de.mqm.seg.score", MTME, "mtme", "--slug", "mt2", "--scale", "auto")
    assert answers(auto)[("mqm", "3")] == {"sysA": 0, "sysB": 92}


def _bad(header: str, rows: list[str]) -> str:
    return "\n".join([header, *rows]) + "\n" if header else "\n".join(rows) + "\n"


GOOD_SCORE_ROW = "ann1,sysA,s1,70"


@pytest.mark.parametrize("fmt, name, content, message", [
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, "ann1,sysB,s1,abc"]),
     "a.csv: line 3: score 'abc' is not a number"),
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, "ann1,sysB,s1,"]),
     "line 3: score is empty"),
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, "ann1,sysB,s1,101"]),
     "line 3: score 101 is outside 0–100"),
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, ",sysB,s1,10"]),
     "line 3: annotator is empty"),
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, "ann1,sysA,s1,20"]),
     "line 3: annotator 'ann1' scored system 'sysA' on segment 's1' again (line 2)"),
    ("scores", "a.csv", _bad("annotator,system,segment,score,document", [GOOD_SCORE_ROW + ",d1", "ann2,sysA,s1,9,d2"]),
     "line 3: segment 's1': document differs from line 2"),
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, "ann1,sysB,s1~spam,10"]),
     "line 3: segment 's1~spam': ids ending in ~spam or ~chk are reserved"),
    ("scores", "a.csv", _bad("annotator,system,segment,scores", [GOOD_SCORE_ROW]),
     "line 1: missing column(s) score; unknown column(s) scores"),
    ("scores", "a.csv", _bad("annotator,system,segment,score", [GOOD_SCORE_ROW, "ann1,sysB,s1,10,extra"]),
     "line 3: 5 cells for 4 columns"),
    ("appraise-csv", "b.csv", _bad("", ["u1,sysA,1,TGT,eng,deu,70,1,2", "u1,sysB,1,XXX,eng,deu,70,1,2"]),
     "b.csv: line 2: type 'XXX' is not one of TGT, REF, BAD, CHK"),
    ("appraise-csv", "b.csv", _bad("", ["u1,sysA,1,TGT,eng,deu,70,1,2", "u1,sysB,1,TGT,eng,deu,70,1"]),
     "line 2: 8 columns; Appraise's export has 9"),
    ("appraise-csv", "b.csv", _bad("", ["u1,sysA,1,TGT,eng,deu,70,1,2", "u1,sysB,1,TGT,eng,deu,70,5,2"]),
     "line 2: end 2 is before start 5"),
    ("appraise-csv", "b.csv", _bad("", ["u1,sysA,1,TGT,eng,deu,70,1,2", "u1,sysB,1,TGT,eng,deu,70,x,2"]),
     "line 2: start 'x' is not a time in seconds since 1970"),
    ("appraise-csv", "b.csv", _bad("", ["u1,sysA,1,TGT,eng,deu,70,1,2", "u1,sysB,1,TGT,e n,deu,70,1,2"]),
     "line 2: source lang: 'e n' is not a BCP 47 language tag"),
    ("appraise-csv", "b.csv", _bad("", ["u1,sysA,1,TGT,eng,deu,70,1,2", "u1,sysB,1,TGT,eng,fra,7,1,2"]),
     "line 2: segment '1': target lang differs from line 1"),
    ("mtme", "en-de.wmt-raw.seg.score", "sysA\t50\nsysA\tfifty\n", "line 2: score 'fifty' is not a number"),
    ("mtme", "en-de.wmt-raw.seg.score", "sysA\t50\nsysA 1 2\n", "line 2: 3 fields"),
    ("mtme", "en-de.wmt-raw.seg.score", "sysA\t50\nsysA\t1\nsysB\t3\n", "systems have different numbers of lines"),
    ("mtme", "en-de.wmt-raw.sys.score", "sysA\t50\n", "reads one segment-level human score file"),
])
def test_bad_rows_are_named_and_nothing_is_stored(tmp_path, fmt, name, content, message):
    make_study(slug="other", n_items=1)  # counts start above zero
    before = counts()
    with pytest.raises(CommandError, match=re.escape(message)) as exc:
        run(tmp_path, name, content, fmt, "--slug", "bad")
    assert exc.value.returncode == 2
    assert "nothing stored" in str(exc.value)
    assert nothing_stored(before) and not Item.objects.filter(study__slug="bad").exists()


def test_options_are_checked(tmp_path):
    before = counts()
    with pytest.raises(CommandError, match="--scale: '1:1' is not LOW:HIGH"):
        run(tmp_path, "a.csv", SCORES, "scores", "--scale", "1:1")
    with pytest.raises(CommandError, match=r"--reference-system: no row has system\(s\) 'nobody'"):
        run(tmp_path, "a.csv", SCORES, "scores", "--reference-system", "nobody")
    study_json = tmp_path / "study.json"
    study_json.write_text("{}")
    with pytest.raises(CommandError, match="--study-file: only for --format export"):
        run(tmp_path, "a.csv", SCORES, "scores", "--study-file", str(study_json))
    with pytest.raises(CommandError, match="--scale: only for the score formats"):
        run(tmp_path, "a.csv", SCORES, "export", "--scale", "auto")
    with pytest.raises(CommandError, match="is a directory; give one file"):
        call_command("import_judgments", str(tmp_path), "--format", "mtme", stdout=io.StringIO())
    assert nothing_stored(before)


# --- export → import round trips of the span and score protocols -------------------------------------------


def _span_study(slug: str, protocol: str, **settings):
    return make_study(**_span_file(slug, protocol, **settings))


def _span_file(slug: str, protocol: str, **settings) -> dict:
    return {"slug": slug, "protocol": protocol, "n_items": 6, "n_candidates": 3,
            "settings": {"redundancy": 3, "spam_rate": 0.2, "show_source": True, **settings}}


def _with_study_file(tmp_path: Path, slug: str, protocol: str, **settings) -> list[str]:
    """--study-file: the texts (span statistics such as unitized alpha depend on their lengths)."""
    path = tmp_path / "study.json"
    path.write_text(json.dumps(study_file(**_span_file(slug, protocol, **settings))))
    return ["--study-file", str(path)]


def _esa_answer(k: int, assignment, candidates) -> dict:
    seed = assignment.item.pk * 7 + k * 13
    return {"annotations": {c.public_id: {
        "spans": ([{"start": 0, "end": 4, "severity": "major" if (seed + n) % 2 else "minor"}]
                  if (seed + n) % 3 == 0 else []),
        "score": (seed * (n + 3)) % 101} for n, c in enumerate(candidates)}}


def _mqm_answer(k: int, assignment, candidates) -> dict:
    seed = assignment.item.pk * 5 + k * 11
    categories = ("Accuracy/Mistranslation", "Fluency/Punctuation", "Discourse/Pronoun reference")
    return {"annotations": {c.public_id: {"spans": (
        [{"start": 0, "end": 4, "category": categories[(seed + n) % 3],
          "severity": ("minor", "major", "critical")[(seed + 2 * n) % 3]},
         {"start": 0, "end": 3, "side": "source", "category": "Accuracy/Omission", "severity": "major",
          "note": "missing"}][: 1 + (seed + n) % 2]
        if (seed + n) % 4 else [])} for n, c in enumerate(candidates)}}


def _judge(study: Study, n: int, answer) -> None:
    for k, annotator in enumerate(annotators_create(study=study, count=n)):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            judgment_submit(assignment=assignment, payload=answer(k, assignment, ordered_candidates(assignment)))


def _stored(slug: str) -> list[tuple]:
    """Every stored answer by (annotator external id or code, item, system): what an import must keep."""
    out = []
    for j in Judgment.objects.filter(assignment__item__study__slug=slug).select_related("assignment__annotator",
                                                                                         "assignment__item"):
        systems = dict(Candidate.objects.filter(item=j.assignment.item).values_list("pk", "system"))
        who = j.assignment.annotator.external_id or j.assignment.annotator.code
        for pk, entry in j.answer["annotations"].items():
            out.append((who, j.assignment.item.external_id, systems[int(pk)], json.dumps(entry, sort_keys=True)))
    return sorted(out)


def _with_control_errors(text: str, fmt: str, slug: str) -> str:
    """The export as written, after checking its ``control_error`` column holds each control item's generated error."""
    errors = {ext: meta["control_error"] for ext, meta in
              Item.objects.filter(study__slug=slug, is_spam=True).values_list("external_id", "metadata")
              if meta.get("control_error")}
    assert errors, "the span study has control items with a generated error"
    rows = [json.loads(line) for line in text.splitlines()] if fmt == "jsonl" else list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        cell = row["control_error"]
        decoded = cell if fmt == "jsonl" else (json.loads(cell) if cell else None)  # JSON Lines: a JSON value
        assert decoded == errors.get(row["item"])
    return text


def _with_json_text_cells(text: str) -> str:
    """A JSON Lines export as older versions wrote it: ``spans`` and ``control_error`` as JSON text in JSON."""
    rows = [json.loads(line) for line in text.splitlines()]
    for row in rows:
        for column in ("spans", "control_error"):
            if row[column] is not None:
                row[column] = json.dumps(row[column], ensure_ascii=False, separators=(",", ":"))
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _without_control_column(text: str) -> str:
    """A CSV export of an older version, without the ``control_error`` column."""
    table = list(csv.DictReader(io.StringIO(text)))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[c for c in table[0] if c != "control_error"], extrasaction="ignore")
    writer.writeheader()
    writer.writerows(table)
    return out.getvalue()


def _without_control(report_data: dict) -> dict:
    return {k: v for k, v in report_data.items() if k != "control"}


@pytest.mark.parametrize("protocol, answer, fmt, control_column", [
    ("esa", _esa_answer, "csv", True), ("esa", _esa_answer, "jsonl", True), ("mqm", _mqm_answer, "csv", True),
    ("mqm", _mqm_answer, "csv", False), ("mqm", _mqm_answer, "jsonl", True),
    ("mqm", _mqm_answer, "jsonl-old", True)])
def test_span_and_score_exports_round_trip(tmp_path, protocol, answer, fmt, control_column):
    study = _span_study("orig", protocol)
    _judge(study, 4, answer)
    assert Item.objects.filter(study=study, is_spam=True).exists()
    path = tmp_path / f"orig.{fmt}"
    text = export("orig", "jsonl" if fmt.startswith("jsonl") else fmt)
    if fmt.startswith("jsonl"):  # spans are JSON arrays in JSON Lines, not JSON text inside JSON
        spans = [json.loads(line)["spans"] for line in text.splitlines()]
        assert all(isinstance(s, list) for s in spans if s is not None) and any(s for s in spans)
    if fmt == "jsonl-old":  # an export written before spans were arrays is read as well
        path.write_text(_with_json_text_cells(_with_control_errors(text, "jsonl", "orig")))
    else:
        path.write_text(_with_control_errors(text, fmt, "orig") if control_column else _without_control_column(text))
    original, stored = report("orig"), _stored("orig")
    # As on another server: the original is gone, so the annotators keep their codes (span agreement lists
    # rater pairs, and precision/recall, in code order).
    study.delete()
    call_command("import_judgments", str(path), "--format", "export", "--slug", "copy",
                 *_with_study_file(tmp_path, "orig", protocol), stdout=io.StringIO())
    copy = Study.objects.get(slug="copy")
    assert copy.protocol == protocol and (protocol != "esa" or copy.esa_spans)
    assert _stored("copy") == stored
    imported = report("copy")
    assert "ranking" in original and "span_agreement" in original and original["control"]["by_kind"]
    if control_column:
        assert same(report_numbers(imported), report_numbers(original))
    else:
        # Without the column the control items lose their generated error: every other figure is the same, but
        # the control block checks them as scrambles (any major span passes), so its counts may differ.
        assert set(imported["control"]["by_kind"]) == {"scrambled"}
        assert same(_without_control(report_numbers(imported)), _without_control(report_numbers(original)))


def test_da_export_round_trips_and_bad_span_cells_are_named(tmp_path):
    study = _span_study("da", "esa", esa_spans=False)
    _judge(study, 3, lambda k, a, cands: {"annotations": {c.public_id: {"score": (a.item.pk + k * 3 + n * 17) % 101}
                                                          for n, c in enumerate(cands)}})
    text = _with_control_errors(export("da", "csv"), "csv", "da")
    path = tmp_path / "da.csv"
    path.write_text(text)
    original, stored = report("da"), _stored("da")
    study.delete()
    call_command("import_judgments", str(path), "--format", "export", "--slug", "da2", stdout=io.StringIO())
    # No --study-file: the DA setting is inferred (no span anywhere), and a DA report has no text-length statistic.
    assert not Study.objects.get(slug="da2").esa_spans
    assert _stored("da2") == stored and same(report_numbers(report("da2")), report_numbers(original))

    header, first, *rest = text.splitlines()
    columns = header.split(",")

    def with_cell(column: str, value: str) -> str:
        cells = first.split(",")  # rows of this study have no quoted commas before the spans column
        cells[columns.index(column)] = value
        return ",".join(cells)

    for cell, column, message in (("abc", "score", "line 2: score 'abc' is not a number"),
                                  ("140", "score", "line 2: score 140 is outside 0–100"),
                                  ('"[{""start"": 3, ""end"": 1, ""severity"": ""minor""}]"', "spans",
                                   "line 2: spans[0]: start and end must be whole numbers with 0 <= start < end"),
                                  ("[oops", "spans", "line 2: spans: not valid JSON")):
        bad = tmp_path / "bad.csv"
        bad.write_text("\n".join([header, with_cell(column, cell), *rest]) + "\n")
        before = counts()
        with pytest.raises(CommandError, match=re.escape(message)):
            call_command("import_judgments", str(bad), "--format", "export", "--slug", "bad", stdout=io.StringIO())
        assert nothing_stored(before)
