"""Suggested error spans (import_prefill): the import, the hand-out's draw, the fates in an answer."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.handout.services import annotators_create
from annotation.items.selectors import answer_for_client
from annotation.models import Judgment
from studies.models import PrefillSource, Study, Suggestion
from tests.span_study import span_study, span_study_file
from tests.factories import owned
from studies.importing.study_file import study_import

pytestmark = pytest.mark.django_db


def _client(annotator: Any) -> Any:
    from rest_framework.test import APIClient
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {annotator.token}")
    return client


def prefill_lines(study: Study, *, clean_every: int = 2) -> list[dict[str, Any]]:
    """One line per (item, system): the second word marked minor, every ``clean_every``-th candidate clean."""
    rows = []
    for k, (item, system, text) in enumerate(study.items.filter(is_spam=False).values_list(
            "external_id", "candidates__system", "candidates__text").order_by("pk", "candidates__pk")):
        first = text.index(" ") + 1
        second = text.index(" ", first)
        spans = [] if k % clean_every == 0 else [{"start": first, "end": second, "severity": "minor",
                                                  **({"category": "Accuracy/Mistranslation"} if study.protocol == "mqm" else {}),
                                                  "score": -1.5}]
        rows.append({"item": item, "system": system, "spans": spans})
    return rows


def write(tmp_path: Path, rows: list[Any], name: str = "qe.jsonl") -> str:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return str(path)


def prefilled(tmp_path: Path, *, protocol: str = "esa", share: float = 1.0, decoys: float = 0.0,
              items: int = 4, slug: str = "pf", **settings: Any) -> Study:
    study = span_study(slug=slug, protocol=protocol, items=items, candidates=2, prefill_share=share,
                       prefill_decoys=decoys, **settings)
    call_command("import_prefill", study.slug, write(tmp_path, prefill_lines(study)), "--format", "jsonl",
                 "--source", "CometKiwi-XL", stdout=StringIO())
    study.refresh_from_db()
    return study


def test_import_stores_spans_with_their_source_and_the_clean_candidates(tmp_path: Path) -> None:
    study = prefilled(tmp_path)
    source = PrefillSource.objects.get(study=study)
    assert source.name == "CometKiwi-XL" and source.file_format == "jsonl" and len(source.sha256) == 64
    rows = list(Suggestion.objects.filter(source=source))
    assert len(rows) == 4 and all(r.score == -1.5 and r.severity == "minor" and not r.is_decoy for r in rows)
    assert len(source.clean_candidates) == 4
    assert study.provenance["prefill"]["n_suggestions"] == 4


def test_decoys_go_on_clean_text_at_the_configured_share(tmp_path: Path) -> None:
    study = prefilled(tmp_path, decoys=0.5, items=6)
    rows = list(Suggestion.objects.filter(source__study=study))
    decoys = [r for r in rows if r.is_decoy]
    real = [r for r in rows if not r.is_decoy]
    assert len(decoys) == len(real) == 6
    clean = set(PrefillSource.objects.get(study=study).clean_candidates)
    assert {d.candidate_id for d in decoys} == clean  # one a clean candidate, these first
    assert study.provenance["prefill"]["n_decoys"] == 6


@pytest.mark.parametrize("line, message", [
    ({"item": "nope", "system": "reference", "spans": []}, "line 1: no candidate of system 'reference' in item 'nope'"),
    ({"item": "pf-0", "system": "reference", "spans": [{"start": 3, "end": 2, "severity": "minor"}]},
     "line 1.spans[0]: span [3, 2) is empty"),
    ({"item": "pf-0", "system": "reference", "spans": [{"start": 0, "end": 2, "severity": "fatal"}]},
     "line 1.spans[0].severity: 'fatal' is not a severity"),
    ({"item": "pf-0", "system": "reference", "spans": [{"start": 0, "end": 2, "severity": "minor", "score": "x"}]},
     "line 1.spans[0].score: must be a number"),
    ({"item": "pf-0", "system": "reference"}, "line 1.spans: required"),
    ("{not json", "line 1: not JSON"),
])
def test_bad_lines_are_named_and_nothing_is_stored(tmp_path: Path, line: Any, message: str) -> None:
    study = span_study(slug="pf", protocol="esa", items=2)
    with pytest.raises(CommandError) as exc:
        call_command("import_prefill", study.slug, write(tmp_path, [line]), "--format", "jsonl", "--source", "qe")
    assert message in str(exc.value)
    assert not Suggestion.objects.exists() and not PrefillSource.objects.exists()
    study.refresh_from_db()
    assert "prefill" not in study.provenance


def test_the_protocol_spec_refuses_other_protocols(tmp_path: Path) -> None:
    data = span_study_file(slug="pw", protocol="pairwise", candidates=2)
    data["settings"]["spans"] = "esa"
    study = owned(study_import(status="open", data=data))
    with pytest.raises(CommandError, match="a pairwise study takes no suggested error spans"):
        call_command("import_prefill", study.slug, write(tmp_path, []), "--format", "jsonl", "--source", "qe")
    da = span_study(slug="da", protocol="esa", esa_spans=False)
    with pytest.raises(CommandError, match="marks no error spans"):
        call_command("import_prefill", da.slug, write(tmp_path, []), "--format", "jsonl", "--source", "qe")


def test_mqm_tsv_prefill(tmp_path: Path) -> None:
    study = span_study(slug="pm", protocol="mqm", items=1, candidates=2)
    cands = list(study.items.get().candidates.order_by("pk"))
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"
    text = cands[1].text
    marked = text[:3] + "<v>" + text[3:9] + "</v>" + text[9:]
    lines = [header,
             f"{cands[0].system}\td\t1\tpm-0\tqe\tsrc\t{cands[0].text}\tNo-error\tNo-error",
             f"{cands[1].system}\td\t1\tpm-0\tqe\tsrc\t{marked}\tAccuracy/Mistranslation\tMajor"]
    path = tmp_path / "qe.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    call_command("import_prefill", study.slug, str(path), "--format", "mqm-tsv", "--source", "xcomet", stdout=StringIO())
    row = Suggestion.objects.get()
    assert (row.candidate_id, row.start, row.end, row.category, row.severity) == (
        cands[1].pk, 3, 9, "Accuracy/Mistranslation", "major")
    assert PrefillSource.objects.get().clean_candidates == [cands[0].pk]


def _next(client: Any) -> dict[str, Any]:
    resp = client.get("/api/v1/annotate/next")
    assert resp.status_code == 200
    return resp.json()


def test_fates_are_validated_and_stored(tmp_path: Path) -> None:
    study = prefilled(tmp_path, decoys=0.3)
    annotator = annotators_create(study=study, count=1)[0]
    client = _client(annotator)
    data = _next(client)
    suggestions = data["suggestions"]
    assert suggestions and all(set(s) <= {"id", "candidate", "start", "end", "side", "severity"} for s in suggestions)
    body = json.dumps(data)
    for secret in ("CometKiwi", "decoy", "is_decoy", "score\": -1.5"):
        assert secret not in body
    own = {c["id"]: {"spans": [], "score": 70} for c in data["candidates"]}
    url = f"/api/v1/annotate/{data['assignment']}/judgment"
    missing = client.post(url, {"annotations": own}, format="json")
    assert missing.status_code == 400 and "Every suggestion shown needs a fate" in missing.json()["errors"]["suggestions"][0]
    wrong = client.post(url, {"annotations": own, "suggestions": {"zzz": {"fate": "kept"}}}, format="json")
    assert "Unknown suggestion id(s) for this item: zzz" in " ".join(wrong.json()["errors"]["suggestions"])
    bad_fate = {s["id"]: {"fate": "maybe"} for s in suggestions}
    resp = client.post(url, {"annotations": own, "suggestions": bad_fate}, format="json")
    assert f"suggestions.{suggestions[0]['id']}.fate: must be one of kept, edited, deleted." in resp.json()["errors"]["suggestions"]
    first = suggestions[0]
    fates: dict[str, Any] = {s["id"]: {"fate": "deleted"} for s in suggestions}
    fates[first["id"]] = {"fate": "edited", "start": first["start"], "end": first["end"] + 1, "severity": "major"}
    if len(suggestions) > 1:
        fates[suggestions[1]["id"]] = {"fate": "kept"}
    assert not Judgment.objects.exists()
    resp = client.post(url, {"annotations": own, "suggestions": fates}, format="json")
    assert resp.status_code == 201, resp.content
    answer = Judgment.objects.get().answer
    assert answer["prefill"]["assisted"] is True
    stored = answer["prefill"]["suggestions"]
    assert stored[first["id"]]["fate"] == "edited" and stored[first["id"]]["edit"]["end"] == first["end"] + 1
    spans = [s for entry in answer["annotations"].values() for s in entry["spans"]]
    assert {"start": first["start"], "end": first["end"] + 1, "side": "target", "severity": "major"} in spans
    assert len(spans) == (2 if len(suggestions) > 1 else 1)
    # a revision starts from the annotator's own marks and the fates, not the merged spans
    judgment = Judgment.objects.get()
    back = answer_for_client(judgment, list(judgment.assignment.item.candidates.all()))
    assert back is not None and back["suggestions"] == {k: {"fate": v["fate"], **v.get("edit", {})}
                                                        for k, v in stored.items()}
    assert all(entry["spans"] == [] for entry in back["annotations"].values())


def test_unassisted_items_show_no_suggestions_and_record_it(tmp_path: Path) -> None:
    study = prefilled(tmp_path, share=0.0)
    client = _client(annotators_create(study=study, count=1)[0])
    data = _next(client)
    assert data["suggestions"] == []
    own = {c["id"]: {"spans": [], "score": 70} for c in data["candidates"]}
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": own}, format="json")
    assert resp.status_code == 201
    assert Judgment.objects.get().answer["prefill"] == {"assisted": False, "suggestions": {}}


def test_the_share_is_drawn_per_annotator_and_item(tmp_path: Path) -> None:
    from studies.definition.prefill import shows_suggestions
    draws = [shows_suggestions(seed=7, annotator=a, item=i, share=0.5) for a in range(40) for i in range(50)]
    assert 0.45 < sum(draws) / len(draws) < 0.55
    assert draws == [shows_suggestions(seed=7, annotator=a, item=i, share=0.5) for a in range(40) for i in range(50)]
    assert draws != [shows_suggestions(seed=8, annotator=a, item=i, share=0.5) for a in range(40) for i in range(50)]


def _answer_assisted(study: Study, *, fate_of: Any) -> Any:
    """One annotator answers every item; each suggestion gets ``fate_of(suggestion dict)``."""
    annotator = annotators_create(study=study, count=1)[0]
    client = _client(annotator)
    while True:
        resp = client.get("/api/v1/annotate/next")
        if resp.status_code == 204:
            return annotator
        data = resp.json()
        own: dict[str, dict[str, Any]] = {c["id"]: {"spans": []} for c in data["candidates"]}
        if study.protocol == "esa":
            own = {k: {**v, "score": 50} for k, v in own.items()}
        fates = {s["id"]: fate_of(s) for s in data["suggestions"]}
        resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": own, "suggestions": fates},
                           format="json")
        assert resp.status_code == 201, resp.content


def test_export_carries_every_suggestion_and_its_fate(tmp_path: Path) -> None:
    from annotation.exporting.judgments import export_lines
    study = prefilled(tmp_path, decoys=0.5, items=4)
    cycle = iter(["kept", "deleted", "edited"] * 20)

    def fate(s: dict[str, Any]) -> dict[str, Any]:
        name = next(cycle)
        return {"fate": name, **({"start": s["start"], "end": s["end"], "severity": "major"} if name == "edited" else {})}

    _answer_assisted(study, fate_of=fate)
    rows = [json.loads(line) for line in export_lines(study, fmt="jsonl")]
    assert all(r["assisted"] is True for r in rows)
    listed = [s for r in rows for s in r["suggestions"]]
    assert {s["id"] for s in listed} == set(Suggestion.objects.values_list("public_id", flat=True))
    assert {s["fate"] for s in listed} == {"kept", "deleted", "edited"}
    assert any(s["decoy"] for s in listed) and all(s["edit"]["severity"] == "major" for s in listed if s["fate"] == "edited")
    header = next(iter(export_lines(study, fmt="csv")))
    assert header.split("\r\n")[0].endswith("assisted,suggestions")


def test_mqm_tsv_export_names_where_each_span_came_from(tmp_path: Path) -> None:
    from annotation.exporting.mqm import mqm_tsv_text
    study = span_study(slug="pm2", protocol="mqm", items=2, candidates=2, prefill_share=1.0)
    call_command("import_prefill", study.slug, write(tmp_path, prefill_lines(study)), "--format", "jsonl",
                 "--source", "xcomet-xl", stdout=StringIO())
    study.refresh_from_db()
    _answer_assisted(study, fate_of=lambda s: {"fate": "kept"})
    text, _, _ = mqm_tsv_text(study)
    lines = [line.split("\t") for line in text.strip().split("\n")]
    assert lines[0][-1] == "metadata"
    ai = [line for line in lines[1:] if line[4] == "xcomet-xl"]
    kept = [line for line in lines[1:] if line[4] != "xcomet-xl" and line[7] != "No-error"]
    assert ai and len(kept) == len([line for line in ai if line[7] != "No-error"])
    assert all(json.loads(line[9])["span_source"] == "kept" for line in kept)
    assert all(json.loads(line[9])["span_source"] == "suggestion" for line in ai if line[7] != "No-error")


def test_report_block_and_methods_sentence_from_recorded_facts(tmp_path: Path) -> None:
    from evaluators.reports.study_stats import report_from_export, study_report
    from annotation.exporting.judgments import judgments_frame
    study = prefilled(tmp_path, share=0.5, decoys=0.3, items=8, redundancy=3)
    for _ in range(3):
        _answer_assisted(study, fate_of=lambda s: {"fate": "kept"})
    report = study_report(study)
    block = report["prefill"]
    assert block["acceptance"]["ai"]["rate"] == 1.0 and block["acceptance"]["decoy"]["n"] >= 1
    assert {r["annotator"] for r in block["acceptance"]["per_annotator"]} == set(study.annotators.values_list("code", flat=True))
    assert block["timing"]["assisted"]["n_items"] + block["timing"]["unassisted"]["n_items"] == 24
    assert block["scores"]["test"] in ("Wilcoxon signed-rank", "Mann–Whitney U")
    assert block["ai_agreement"]["assisted"]["recall"] == 1.0  # every AI span kept
    facts = report["facts"]["prefill"]
    assert facts["source"] == "CometKiwi-XL" and facts["share"] == 0.5
    methods = block["methods"]
    assert "suggested by CometKiwi-XL" in methods and "50.0% of the items" in methods
    assert f"{facts['n_decoys']} decoy spans" in methods and "kept 100.0% of the suggestions" in methods
    # the same figures from the export alone
    again = report_from_export(judgments_frame(study))["prefill"]
    assert again["acceptance"] == block["acceptance"] and again["scores"] == block["scores"]


def test_mqm_tsv_export_carries_deleted_fates_and_reads_back(tmp_path: Path, admin_user: Any) -> None:
    """Deleted suggestions go in the rating's metadata (``deleted_suggestions``), never as error rows: Google's
    readers and our own ``import_judgments --format mqm-tsv`` read the file back with the same errors."""
    from annotation.exporting.mqm import mqm_tsv_text
    from formats.mqm_tsv import parse_mqm_tsv
    study = span_study(slug="pm3", protocol="mqm", items=4, candidates=2, prefill_share=1.0, prefill_decoys=0.3)
    call_command("import_prefill", study.slug, write(tmp_path, prefill_lines(study, clean_every=3)), "--format",
                 "jsonl", "--source", "xcomet-xl", stdout=StringIO())
    study.refresh_from_db()
    cycle = iter(["deleted", "kept"] * 40)
    _answer_assisted(study, fate_of=lambda s: {"fate": next(cycle)})
    fates = {sid: f["fate"] for j in Judgment.objects.all() for sid, f in j.answer["prefill"]["suggestions"].items()}
    deleted_ids = {sid for sid, fate in fates.items() if fate == "deleted"}
    assert deleted_ids and any(fate == "kept" for fate in fates.values())
    text, _, _ = mqm_tsv_text(study)
    lines = [line.split("\t") for line in text.strip().split("\n")]
    human = [line for line in lines[1:] if line[4] != "xcomet-xl"]
    written = [d for line in human if line[9] for d in json.loads(line[9]).get("deleted_suggestions", [])]
    assert {d["suggestion"] for d in written} == deleted_ids  # each deleted suggestion once, with its span
    decoys = set(Suggestion.objects.filter(is_decoy=True).values_list("public_id", flat=True))
    assert all(d["decoy"] == (d["suggestion"] in decoys) and {"start", "end", "severity", "category"} <= set(d)
               for d in written)
    kept_rows = [line for line in human if line[7] != "No-error"]
    assert len(kept_rows) == sum(fate == "kept" for fate in fates.values())  # deleted ones are no error rows
    assert all(json.loads(line[9])["span_source"] == "kept" for line in kept_rows)
    # a candidate whose every suggestion was deleted is a No-error row carrying them
    assert any(line[7] == "No-error" and "deleted_suggestions" in line[9] for line in human)
    # Google's layout: ten columns, the tenth a JSON object on every row that has one
    data = parse_mqm_tsv(text)
    assert data.extra_column == "metadata" and all(len(line) == 10 for line in lines)
    # our own reader stores the same errors per rater and candidate, the deleted ones not among them
    path = tmp_path / "export.tsv"
    path.write_text(text, encoding="utf-8")
    out = StringIO()
    call_command("import_judgments", str(path), "--format", "mqm-tsv", "--slug", "pm3-back", stdout=out)
    back = Study.objects.get(slug="pm3-back")
    expected = {(line[4], line[3], line[0]) for line in lines[1:]}
    stored: dict[tuple[str, str, str], int] = {}
    for j in Judgment.objects.filter(assignment__item__study=back).select_related("assignment__annotator"):
        systems = dict(back.items.get(pk=j.assignment.item_id).candidates.values_list("pk", "system"))
        for pk, entry in j.answer["annotations"].items():
            key = (j.assignment.annotator.external_id, j.assignment.item.metadata["mqm_tsv"]["seg_id"], systems[int(pk)])
            stored[key] = len(entry["spans"])
    assert set(stored) == expected
    assert sum(stored.values()) == sum(1 for line in lines[1:] if line[7] != "No-error")
