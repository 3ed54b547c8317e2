"""The document view of document-unit items: page markup and the API's sentence lists."""
from __future__ import annotations

import lxml.html  # type: ignore[import-untyped]  # installed with sacrebleu (requirements.txt)
import pytest
from django.test import Client

from annotation.models import Assignment
from annotation.items.rendering import highlighted_sentences
from annotation.items.selectors import ordered_candidates
from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.importing.study_file import study_import
from studies.models import Item
from tests.conftest import annotator_client
from tests.document_study import document_study_file

pytestmark = pytest.mark.django_db

FORBIDDEN = ("reference", "system-", "is_reference", "is_spam", "spam")


def judge_first_block(study):
    annotator = annotators_create(study=study)[0]
    first = assignment_next(annotator=annotator)
    assert first is not None and first.item.position == 1
    judgment_submit(assignment=first, payload={"ranks": {c.public_id: 1 for c in ordered_candidates(first)}})
    return annotator


def second_block_page(**kwargs):
    study = study_import(status="open", data=document_study_file(slug="doc", candidates=3, sentences=5, blocks=3, **kwargs))
    annotator = judge_first_block(study)
    resp = Client().get(f"/a/{annotator.token}/item/", follow=True)
    assert resp.status_code == 200
    assignment = Assignment.objects.get(annotator=annotator, sequence=2)
    return study, assignment, resp.content.decode()


def cls(name: str) -> str:
    """XPath test for an element having the class ``name``."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def columns(html: str) -> tuple[lxml.html.HtmlElement, list[list[str]]]:
    """The grid, and the text of each column's rows (the source column first, then the cards in screen order)."""
    tree = lxml.html.fromstring(html)
    grid = tree.xpath(f"//div[{cls('doc-scroll')}]/div[{cls('cards')}]")[0]
    cols = []
    for col in grid:
        lines = col.xpath(f"./div[{cls('doc-lines')} or {cls('cand-text')}]/p[{cls('line')}]")
        cols.append([line.text_content() for line in lines])
    return tree, cols


def test_source_sentence_i_and_each_candidates_sentence_i_share_grid_row_i():
    study, assignment, html = second_block_page()
    item = assignment.item
    tree, cols = columns(html)
    scroll = tree.xpath(f"//div[{cls('doc-scroll')}]")[0]
    assert "--doc-rows: 4" in scroll.get("style")  # the grid: column heads, 4 sentence rows, rank controls
    grid = scroll.xpath(f"./div[{cls('cards')} and {cls('document')}]")[0]
    assert grid[0].get("class") == "doc-source" and len(grid) == 4
    assert cols[0] == item.source_sentences
    for col, cand in zip(cols[1:], ordered_candidates(assignment)):
        assert col == cand.sentences  # row i of every card is its sentence i
    # Every column's rows are direct children of one row container, in order: CSS subgrid puts child i in row i.
    for col in grid:
        container = col.xpath(f"./div[{cls('doc-lines')} or {cls('cand-text')}]")[0]
        assert all(child.tag == "p" and "line" in child.get("class") for child in container)


def test_shorter_columns_are_padded_so_rows_never_shift():
    data = document_study_file(slug="pad", candidates=2, sentences=3, blocks=1)
    item = data["items"][0]
    item["source"] = "\n".join(item.pop("source_sentences")) + "\nAn extra source line."
    for cand in item["candidates"]:
        cand["text"] = "\n".join(cand.pop("sentences"))
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    html = Client().get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    _, cols = columns(html)
    assert [len(c) for c in cols] == [4, 4, 4]  # lines of the texts, the candidates padded with an empty row
    assert cols[0][3] == "An extra source line." and cols[1][3] == "" and cols[2][3] == ""


def test_earlier_blocks_are_read_only_source_only_and_the_current_block_is_marked():
    study, assignment, html = second_block_page()
    tree = lxml.html.fromstring(html)
    assert tree.xpath(f"//section[{cls('doc-context')}]/h2")[0].text_content() == "Block 2 of 3 in this document"
    details = tree.xpath("//details[@data-doc-earlier]")[0]
    assert details.get("open") is not None  # one short earlier block (4 lines): open
    assert not details.xpath(".//input | .//button | .//textarea | .//select | .//*[@contenteditable]")  # read-only
    blocks = details.xpath(f".//li[{cls('doc-block')}]")
    first = Item.objects.get(study=study, position=1)
    assert [p.text_content() for p in blocks[0].xpath(f"./div[{cls('doc-block-text')}]/p")] == first.source_sentences
    current = details.xpath(f".//li[{cls('doc-block')} and {cls('is-current')}]")
    assert len(blocks) == 2 and current == [blocks[-1]] and current[0].get("aria-current") == "step"
    assert "Block 2: this screen" in current[0].text_content()
    earlier_outputs = [s for c in first.candidates.all() for s in c.sentences if s not in first.source_sentences]
    assert earlier_outputs and not any(s in details.text_content() for s in earlier_outputs)


def test_without_the_source_each_candidate_shows_its_own_earlier_blocks_under_its_letter():
    """BlonDe App. D: whole documents, one per system, in one system order per document; no source column."""
    study, assignment, html = second_block_page(show_source=False)
    tree, cols = columns(html)
    assert not tree.xpath(f"//*[{cls('doc-source')}]")
    assert len(cols) == 3
    assert tree.xpath(f"//section[{cls('doc-context')}]/h2")[0].text_content() == "Block 2 of 3 in this document"
    first = Item.objects.get(study=study, position=1)
    assert not any(s in html for s in first.source_sentences)
    details = tree.xpath("//details[@data-doc-earlier]")[0]
    assert details.get("open") is not None  # short: open
    block = details.xpath(f".//li[{cls('doc-block')}]")[0]
    shown = {col.xpath(f"./h4[{cls('doc-block-letter')}]")[0].text_content():
             [p.text_content() for p in col.xpath(f"./div[{cls('doc-block-text')}]/p")]
             for col in block.xpath(f".//div[{cls('doc-block-column')}]")}
    # Letter X's earlier text is the block-1 text of the system behind letter X on this screen.
    on_screen = ordered_candidates(assignment)
    earlier = {c.system: c.sentences for c in first.candidates.all()}
    letters = "ABC"
    assert shown == {f"Candidate {letters[k]}": earlier[c.system] for k, c in enumerate(on_screen)}
    lowered = html.lower()
    for word in FORBIDDEN:
        assert word not in lowered, word


def test_earlier_blocks_of_a_long_document_start_collapsed():
    study = study_import(status="open", data=document_study_file(slug="long", candidates=2, sentences=4, blocks=3,
                                                                  show_source=False))
    annotator = annotators_create(study=study)[0]
    for _ in range(2):
        current = assignment_next(annotator=annotator)
        assert current is not None
        judgment_submit(assignment=current, payload={"ranks": {c.public_id: 1 for c in ordered_candidates(current)}})
    html = Client().get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    tree = lxml.html.fromstring(html)
    details = tree.xpath("//details[@data-doc-earlier]")[0]
    assert details.get("open") is None  # two earlier blocks of 4 lines: 8 > OPEN_LINES
    assert len(details.xpath(f".//li[{cls('doc-block')}]")) == 3


def test_earlier_blocks_keep_the_candidates_typography_normalised():
    """Without it the reference's curly quotes in block 1 would single out its letter on block 2."""
    data = document_study_file(slug="typo2", candidates=2, sentences=2, blocks=2, show_source=False,
                               normalise_typography=True)
    data["items"][0]["candidates"][0]["sentences"] = ["“Well… it’s late,” she said.", "He left."]
    study = study_import(status="open", data=data)
    annotator = judge_first_block(study)
    html = Client().get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    details = lxml.html.fromstring(html).xpath("//details[@data-doc-earlier]")[0]
    assert "\"Well... it's late,\" she said." in details.text_content()
    assert "’" not in details.text_content() and "…" not in details.text_content()


def test_a_spam_copy_shows_the_same_earlier_texts_as_its_item():
    data = document_study_file(slug="spamearly", candidates=3, sentences=6, blocks=3, show_source=False)
    data["settings"]["spam_rate"] = 0.5
    study = study_import(status="open", data=data)
    from annotation.items.document import document_screen
    copies = list(Item.objects.filter(study=study, is_spam=True, spam_of__position__gt=1))
    assert copies
    for spam in copies:
        cands = sorted(spam.candidates.all(), key=lambda c: c.system)
        real_cands = sorted(spam.spam_of.candidates.all(), key=lambda c: c.system)
        views: list[dict] = [{"lines": [], "letter": "ABC"[k]} for k in range(3)]
        screen = document_screen(item=spam, study=study, cands=cands, candidate_views=views)
        real = document_screen(item=spam.spam_of, study=study, cands=real_cands, candidate_views=views)
        assert screen["earlier"] == real["earlier"] and screen["earlier"]


def test_a_spam_copy_sits_in_its_real_items_document():
    data = document_study_file(slug="spamdoc", candidates=3, sentences=6, blocks=3)
    data["settings"]["spam_rate"] = 0.5
    study = study_import(status="open", data=data)
    from annotation.items.document import document_screen
    for spam in Item.objects.filter(study=study, is_spam=True):
        cands = list(spam.candidates.all())
        views: list[dict] = [{"lines": []} for _ in cands]
        screen = document_screen(item=spam, study=study, cands=cands, candidate_views=views)
        real = document_screen(item=spam.spam_of, study=study, cands=cands, candidate_views=views)
        assert (screen["number"], screen["total"], screen["earlier"]) == (real["number"], real["total"], real["earlier"])
        assert screen["total"] == 3


def test_no_system_names_or_flags_in_the_document_page():
    _, _, html = second_block_page()
    lowered = html.lower()
    for word in FORBIDDEN:
        assert word not in lowered, word


def test_api_next_gives_sentence_lists_and_the_document_without_leaking():
    study = study_import(status="open", data=document_study_file(slug="apidoc", candidates=3, sentences=5, blocks=2))
    annotator = judge_first_block(study)
    resp = annotator_client(annotator).get("/api/v1/annotate/next")
    data = resp.json()
    item = Item.objects.get(study=study, position=2)
    first = Item.objects.get(study=study, position=1)
    assert data["source_sentences"] == item.source_sentences
    assert data["source"] == item.source  # the old fields are unchanged
    by_id = {c.public_id: c for c in item.candidates.all()}
    for cand in data["candidates"]:
        assert cand["sentences"] == by_id[cand["id"]].sentences and cand["text"] == by_id[cand["id"]].text
    assert data["document"] == {"block": 2, "blocks": 2,
                                "previous": [{"source_sentences": first.source_sentences, "candidates": []}]}
    body = resp.content.decode().lower()
    for word in FORBIDDEN:
        assert word not in body, word


def test_api_without_the_source_gives_each_candidates_own_earlier_sentences():
    study = study_import(status="open", data=document_study_file(slug="apimono", candidates=2, sentences=3, blocks=2,
                                                  show_source=False))
    resp = annotator_client(judge_first_block(study)).get("/api/v1/annotate/next")
    data = resp.json()
    assert data["source"] is None and data["source_sentences"] == []
    assert all(c["sentences"] for c in data["candidates"])
    current = {c.public_id: c.system for c in Item.objects.get(study=study, position=2).candidates.all()}
    earlier = {c.system: c.sentences for c in Item.objects.get(study=study, position=1).candidates.all()}
    previous = data["document"]["previous"]
    assert (data["document"]["block"], data["document"]["blocks"], len(previous)) == (2, 2, 1)
    assert previous[0]["source_sentences"] == []
    # In screen order, each keyed by the opaque id of the candidate on this screen: its own system's block 1.
    assert [c["id"] for c in previous[0]["candidates"]] == [c["id"] for c in data["candidates"]]
    assert all(c["sentences"] == earlier[current[c["id"]]] for c in previous[0]["candidates"])
    body = resp.content.decode().lower()
    for word in FORBIDDEN:
        assert word not in body, word


def test_sentence_unit_api_gives_lines_and_no_document():
    from tests.factories import make_study
    study = make_study(n_items=2)
    data = annotator_client(annotators_create(study=study)[0]).get("/api/v1/annotate/next").json()
    assert data["document"] is None
    assert all(c["sentences"] == [c["text"]] for c in data["candidates"])


def test_highlights_are_marked_per_sentence_when_the_text_joins_sentences_by_spaces():
    sentences = ["He came.", "<She> left."]
    text = " ".join(sentences)
    lines = highlighted_sentences(text, [[3, 13]], sentences)  # "came. <She": across the sentence boundary
    assert lines == ["He <mark>came.</mark>", "<mark>&lt;She</mark>&gt; left."]
    assert highlighted_sentences("a\nb", [], None) == ["a", "b"]
    assert highlighted_sentences("edited in the admin", [[0, 3]], ["one", "two"]) == ["one", "two"]


def test_a_block_outside_any_document_shows_no_block_line_but_its_context():
    data = document_study_file(slug="alone", candidates=2, sentences=3, blocks=1, show_source=False)
    data["items"][0]["target_context"] = ["What came before."]
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    html = Client().get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    tree = lxml.html.fromstring(html)
    assert "in this document" not in html
    assert tree.xpath(f"//section[{cls('doc-context')}]/h2")[0].text_content() == "Preceding text"
    assert "What came before." in tree.xpath(f"//section[{cls('doc-context')}]")[0].text_content()


def test_normalised_typography_reaches_the_sentence_rows_and_the_api_sentences():
    """With normalise_typography, a reference's curly quotes and ellipsis never show in its sentence rows."""
    data = document_study_file(slug="typo", candidates=2, sentences=2, blocks=1, normalise_typography=True)
    ref = data["items"][0]["candidates"][0]
    ref["sentences"] = ["“Well… it’s late,” she said.", "He left."]
    ref["highlights"] = [[7, 11]]  # "it’s"
    study = study_import(status="open", data=data)
    annotator = annotators_create(study=study)[0]
    html = Client().get(f"/a/{annotator.token}/item/", follow=True).content.decode()
    _, cols = columns(html)
    assert ["\"Well... it's late,\" she said.", "He left."] in cols
    assert "<mark>it&#x27;s</mark>" in html  # the highlight moved with the longer "..."
    data = annotator_client(annotator).get("/api/v1/annotate/next").json()
    texts = [c["sentences"] for c in data["candidates"]]
    assert ["\"Well... it's late,\" she said.", "He left."] in texts
    assert not any(ch in str(data["candidates"]) for ch in "“”’…")
