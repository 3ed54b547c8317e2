"""The Google WMT MQM TSV reader/writer: parsing, <v> markers -> offsets, bad rows by line, round trip.

Uses the Apache-2.0 subset of the WMT21 TED en-de release in fixtures/wmt-mqm/ (no Django, no network).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from formats.mqm_tsv import (
    MqmTsvError,
    Span,
    format_mqm_tsv,
    parse_mqm_tsv,
    read_mqm_tsv,
    strip_markers,
    write_mqm_tsv,
)
from evaluators.stats.mqm import mqm_segment_scores, system_scores

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "wmt-mqm" / "mqm_ted_ende.subset.tsv"
HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity"


def tsv(*rows: str, header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def test_markers_become_offsets_into_the_clean_text() -> None:
    clean, spans, problem = strip_markers("Ich <v>möchte</v> Sie <v>bitten</v>.", "target")
    assert problem is None
    assert clean == "Ich möchte Sie bitten."
    assert spans == [Span("target", 4, 10), Span("target", 15, 21)]
    assert [clean[s.start : s.end] for s in spans] == ["möchte", "bitten"]
    for bad, msg in (("a</v>b", "</v> without <v>"), ("<v>a<v>b</v></v>", "inside a marked span"), ("a<v></v>b", "empty span"), ("a<v>b", "without </v>")):
        assert msg in (strip_markers(bad, "target")[2] or "")
    assert strip_markers("a<v>bc", "target", unclosed="close_at_end")[1] == [Span("target", 1, 3)]


def test_same_segment_must_have_the_same_clean_texts() -> None:
    # the omission row's source is "Hello big world." without markers, which differs from "Hello world."
    text = tsv(
        "sysA\tdoc1\t1\t10\trater1\tHello world.\tHallo Erde.\tAccuracy/Mistranslation\tMajor",
        "sysA\tdoc1\t1\t10\trater1\tHello <v>big</v> world.\tHallo Erde.\tAccuracy/Omission\tMinor",
    )
    with pytest.raises(MqmTsvError) as err:
        parse_mqm_tsv(text, source="t.tsv")
    assert err.value.problems == [(3, "source differ(s) from line 2 for the same system/doc/segment")]
    assert "t.tsv: 1 bad row(s); nothing was read" in str(err.value)


def test_judgments_errors_and_offsets() -> None:
    text = tsv(
        "sysA\tdoc1\t1\t10\trater1\tHello big world.\tHallo <v>Erde</v>.\tAccuracy/Mistranslation\tMajor",
        "sysA\tdoc1\t1\t10\trater1\tHello <v>big</v> world.\tHallo Erde.\tAccuracy/Omission\tMinor",
        "sysA\tdoc1\t1\t10\trater2\tHello big world.\tHallo Erde.\tNo-error\tNo-error",
        "sysB\tdoc1\t1\t10\trater1\tHello big world.\tHallo Welt.\tno-error\tno-error",
    )
    data = parse_mqm_tsv(text)
    assert len(data.judgments) == 3
    j0 = data.judgments[0]
    assert (j0.segment, j0.rater) == (0, "rater1")
    assert [(e.category, e.severity, e.spans, e.line) for e in j0.errors] == [
        ("Accuracy/Mistranslation", "Major", (Span("target", 6, 10),), 2),
        ("Accuracy/Omission", "Minor", (Span("source", 6, 9),), 3),
    ]
    seg = data.segments[0]
    assert seg.target[6:10] == "Erde" and seg.source[6:9] == "big"
    assert data.judgments[1].errors == () and data.judgments[2].errors == ()
    rows = pd.DataFrame(data.rows())
    assert list(rows["segment"]) == [0, 0, 0, 0]  # the same item for both systems
    assert list(rows["segment_index"]) == [0, 0, 0, 1]
    scores = mqm_segment_scores(rows).set_index(["system", "rater"])["score"]
    assert scores[("sysA", "rater1")] == 6.0 and scores[("sysA", "rater2")] == 0.0


def test_every_bad_row_is_named_by_line_and_nothing_is_read() -> None:
    text = tsv(
        "sysA\tdoc1\t1\t10\trater1\tsrc\ttgt <v>x</v>\tAccuracy/Mistranslation\tMajor",  # 2 ok
        "sysA\tdoc1\t2\t11\trater1\tsrc\ttgt\tAccuracy/Mistranslation",  # 3: 8 fields
        "sysA\tdoc1\t3\t12\trater1\tsrc\ttgt </v>\tStyle/Awkward\tMinor",  # 4: close without open
        "sysA\tdoc1\t4\t13\trater1\tsrc\ttgt <v>x</v>\tNo-error\tNo-error",  # 5: No-error with a span
        "sysA\tdoc1\t5\t14\t\tsrc\ttgt\tStyle/Awkward\tMinor",  # 6: empty rater
        "sysA\t\t6\t15\trater1\tsrc\ttgt\tStyle/Awkward\tMinor",  # 7: empty doc
        "sysA\tdoc1\t7\t16\trater1\tsrc\ttgt\tStyle/Awkward\t",  # 8: empty severity
        "",  # 9: empty line
        "sysA\tdoc1\t8\t17\trater1\tsrc\ttgt\tNo-error\tNo-error",  # 10 ok
        "sysA\tdoc1\t8\t17\trater1\tsrc\ttgt\tNo-error\tNo-error",  # 11: second No-error
    )
    with pytest.raises(MqmTsvError) as err:
        parse_mqm_tsv(text, source="bad.tsv")
    lines = [ln for ln, _ in err.value.problems]
    assert lines == [3, 4, 5, 6, 7, 8, 9, 11]
    msgs = dict(err.value.problems)
    assert msgs[3] == "8 tab-separated fields, expected 9"
    assert "</v> without <v>" in msgs[4]
    assert "No-error row with a <v>" in msgs[5]
    assert msgs[6] == "empty rater"
    assert msgs[7] == "empty doc"
    assert msgs[8] == "empty severity"
    assert msgs[9] == "empty line"
    assert "second No-error row" in msgs[11] and "line 10" in msgs[11]
    report = str(err.value)
    assert report.startswith("bad.tsv: 8 bad row(s); nothing was read")
    assert "  line 4: target: </v> without <v>" in report


def test_bad_headers() -> None:
    with pytest.raises(MqmTsvError, match="header column 3 is 'x', expected doc_id or docsegid"):
        parse_mqm_tsv("system\tdoc\tx\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n")
    with pytest.raises(MqmTsvError, match="header column 10 is 'extra'"):
        parse_mqm_tsv(HEADER + "\textra\n")
    with pytest.raises(MqmTsvError, match="empty file"):
        parse_mqm_tsv("")


def test_header_variants_and_headerless_files() -> None:
    marot = "system\tdoc\tdocSegId\tglobalSegId\trater\tsource\ttarget\tcategory\tseverity\tmetadata"
    row = "sysA\tdoc1\t1\t0\trater1\tsrc\t<v>tgt</v>\tStyle/Awkward\tMinor\t{\"note\": \"x\"}"
    data = parse_mqm_tsv(tsv(row, header=marot))
    assert data.extra_column == "metadata" and data.header
    assert data.judgments[0].errors[0].note == '{"note": "x"}'
    bare = parse_mqm_tsv(row + "\n")
    assert not bare.header and bare.extra_column == "metadata"
    assert bare.segments == data.segments and bare.judgments == data.judgments
    assert format_mqm_tsv(bare).splitlines()[0] == row  # headerless stays headerless


def test_fixture_parses_and_scores() -> None:
    with pytest.raises(MqmTsvError) as err:
        read_mqm_tsv(FIXTURE)
    assert err.value.problems[0][0] == 1502 and "<v> without </v>" in err.value.problems[0][1]
    data = read_mqm_tsv(FIXTURE, unclosed="close_at_end")
    assert data.warnings == ["line 1502: <v> without </v>; the span runs to the end of the text"]
    assert data.extra_column == "comment"
    assert len({s.system for s in data.segments}) == 14
    assert len(data.item_keys()) == 101
    assert len(data.segments) == 14 * 101 and len(data.judgments) == 14 * 101
    n_rows = sum(max(1, len(j.errors)) for j in data.judgments)
    assert n_rows == 1534  # every data row of the file is one error or one No-error rating
    # every span covers the text between the markers of its row in the file
    raw = FIXTURE.read_text(encoding="utf-8").split("\n")
    checked = 0
    for j in data.judgments:
        seg = data.segments[j.segment]
        for e in j.errors:
            fields = raw[e.line - 1].split("\t")
            for s in e.spans:
                marked = fields[6] if s.side == "target" else fields[5]
                inner = marked.split("<v>", 1)[1].split("</v>", 1)[0]
                text = seg.target if s.side == "target" else seg.source
                assert text[s.start : s.end] == inner
                checked += 1
    assert checked > 600
    assert any(s.side == "source" for j in data.judgments for e in j.errors for s in e.spans)
    scores = system_scores(mqm_segment_scores(pd.DataFrame(data.rows()))).set_index("system")["score"]
    assert scores["ref"] == scores.min()  # the human reference has the fewest errors in this subset too
    assert scores["Nemo"] == scores.max()


def test_round_trip_read_write_read(tmp_path: Path) -> None:
    data = read_mqm_tsv(FIXTURE, unclosed="close_at_end")
    out = tmp_path / "again.tsv"
    write_mqm_tsv(data, out)
    again = read_mqm_tsv(out)  # the writer closes every span: strict reading works now
    assert again.segments == data.segments
    assert again.judgments == data.judgments
    assert again.extra_column == data.extra_column and again.header
    assert format_mqm_tsv(again) == out.read_text(encoding="utf-8")  # the writer is a fixed point
    assert out.read_text(encoding="utf-8").splitlines()[0] == HEADER + "\tcomment"


def test_round_trip_keeps_segment_only_rows_and_interleaved_judgments() -> None:
    text = tsv(
        "sysA\tdoc1\t1\t1\trater1\ts1\tt1\tNo-error\tNo-error",
        "sysA\tdoc1\t2\t2\t\ts2\tt2\t\t",  # a segment-only row (Marot)
        "sysA\tdoc1\t3\t3\trater1\ts3\t<v>t</v>3\tStyle/Awkward\tMinor",
        "sysA\tdoc1\t1\t1\trater2\ts1\tt<v>1</v>\tFluency/Spelling\tMajor",
        "sysA\tdoc1\t3\t3\trater1\ts3\tt<v>3</v>\tFluency/Grammar\tMinor",
    )
    data = parse_mqm_tsv(text)
    assert [s.doc_seg_id for s in data.segments] == ["1", "2", "3"]
    assert [(j.segment, j.rater, len(j.errors)) for j in data.judgments] == [(0, "rater1", 0), (2, "rater1", 2), (0, "rater2", 1)]
    again = parse_mqm_tsv(format_mqm_tsv(data))
    assert again.segments == data.segments and again.judgments == data.judgments


def test_writer_refuses_what_the_format_cannot_hold() -> None:
    data = parse_mqm_tsv(tsv("sysA\tdoc1\t1\t1\trater1\tsrc\ttgt\tNo-error\tNo-error"))
    from dataclasses import replace

    bad = replace(data.segments[0], target="two\tcells")
    data.segments[0] = bad
    with pytest.raises(ValueError, match="tab or a line break"):
        format_mqm_tsv(data)


def test_crlf_bom_and_non_utf8(tmp_path: Path) -> None:
    row = "sysA\tdoc1\t1\t1\trater1\tsrc\t<v>tgt</v>\tStyle/Awkward\tMinor"
    data = parse_mqm_tsv("\ufeff" + HEADER + "\r\n" + row + "\r\n")
    assert data.header and data.judgments[0].errors[0].severity == "Minor"
    assert data.segments[0].target == "tgt"
    bad = tmp_path / "latin1.tsv"
    bad.write_bytes((HEADER + "\n" + row.replace("src", "Stra\xdfe") + "\n").encode("latin-1"))
    with pytest.raises(MqmTsvError) as err:
        read_mqm_tsv(bad)
    assert err.value.problems[0][0] == 2 and "not UTF-8" in err.value.problems[0][1]
