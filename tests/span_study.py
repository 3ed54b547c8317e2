"""Study files for the span protocols' page tests (MQM, ESA, DA): real-looking texts, sentence or document units."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotation.handout.services import annotators_create

from studies.importing.study_file import study_import
from studies.models import Study
from tests.conftest import annotator_client
from tests.factories import owned

SOURCE = "The old ferry leaves the harbour every morning at seven."
TARGETS = [
    "Le vieux ferry quitte le port chaque matin à sept heures.",
    "La vieille ferry part du port tous les soirs à sept heures.",
    "Le ancien bac quitte la port chaque matin.",
    "Le vieux traversier quitte le havre chaque matin à sept heures.",
    "Le vieux ferry part du port chaque matin vers sept heures.",
]
AR_SOURCE = "The children went to school in the morning."
AR_TARGETS = ["ذهب الأطفال إلى المدرسة في الصباح.", "ذهبت الأطفال الى المدرسه في المساء."]


def span_study_file(*, slug: str, protocol: str = "mqm", candidates: int = 2, items: int = 3,
                    arabic: bool = False, **settings: Any) -> dict[str, Any]:
    """Sentence items with ``candidates`` systems (the first the reference)."""
    source, targets = (AR_SOURCE, AR_TARGETS) if arabic else (SOURCE, TARGETS)
    data_items = [{"id": f"{slug}-{i}", "source": source, "source_context": ["Harbour news."],
                   "target_context": ["Nouvelles du port."],
                   "candidates": [{"system": "reference" if k == 0 else f"system-{k}", "is_reference": k == 0,
                                   "text": targets[k % len(targets)]} for k in range(candidates)]}
                  for i in range(items)]
    base: dict[str, Any] = {"redundancy": 1, "spam_rate": 0.0, "show_source": True, "unit": "sentence",
                            "source_language": "en", "target_language": "ar" if arabic else "fr",
                            "instructions": "Mark the errors."}
    base.update(settings)
    return {"slug": slug, "title": f"Span study {slug}", "protocol": protocol, "settings": base, "items": data_items}


def span_document_file(*, slug: str, protocol: str = "mqm", candidates: int = 5, segments: int = 10,
                       **settings: Any) -> dict[str, Any]:
    """One document of two blocks; the second has ``segments`` sentences, the first two."""
    from tests.document_study import block_sentences
    items = []
    for b, n in enumerate((2, segments)):
        items.append({"id": f"{slug}-b{b + 1}", "document_id": f"{slug}-doc", "position": b + 1,
                      "source_sentences": block_sentences(b, n, None),
                      "candidates": [{"system": "reference" if s == 0 else f"system-{s}", "is_reference": s == 0,
                                      "sentences": block_sentences(b, n, s)} for s in range(candidates)]})
    base: dict[str, Any] = {"redundancy": 1, "spam_rate": 0.0, "show_source": True, "unit": "document",
                            "source_language": "en", "target_language": "fr"}
    base.update(settings)
    return {"slug": slug, "title": f"Span document {slug}", "protocol": protocol, "settings": base, "items": items}


def span_study(**kwargs: Any) -> Study:
    """An open span study owned by the ``owner`` persona (tests/factories.py)."""
    return owned(study_import(status="open", data=span_study_file(**kwargs)))


def answer_all(study: Study, plan: Callable[[int, str, str], dict], annotators: int = 2) -> None:
    """``annotators`` annotators answer every item through the API; ``plan(annotator_index, item_id, system)`` →
    that candidate's answer."""
    for k, annotator in enumerate(annotators_create(study=study, count=annotators)):
        client = annotator_client(annotator)
        while True:
            resp = client.get("/api/v1/annotate/next")
            if resp.status_code == 204:
                break
            data = resp.json()
            ids = [c["id"] for c in data["candidates"]]
            cands = {c.public_id: c for c in study.items.get(candidates__public_id=ids[0]).candidates.all()}
            item = cands[ids[0]].item.external_id
            annotations = {cid: plan(k, item, cands[cid].system) for cid in ids}
            resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": annotations},
                               format="json")
            assert resp.status_code == 201, resp.content
