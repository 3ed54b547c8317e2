"""An ESA pilot study with known scores and answer times, for the planning command and page."""
from __future__ import annotations

from annotation.handout.services import annotators_create
from annotation.models import Judgment
from studies.importing.study_file import study_import
from studies.models import Study
from tests.conftest import annotator_client
from tests.factories import study_file

#: Server seconds of every judgment; each judgment rates the item's three candidates.
JUDGMENT_SECONDS = 30


def esa_score(k: int, item: str, system: str) -> int:
    """reference ≫ sys1 > sys2 (close), varying with the item and the annotator."""
    i = int(item.split("-")[1])
    return {"reference": 80, "sys1": 50, "sys2": 48}[system] + (i * 7) % 11 - 5 + (3 if k else -3) * (i % 2)


def esa_pilot_study(slug: str = "pilot", n_items: int = 12) -> Study:
    """Two annotators score every item (ESA); every judgment took :data:`JUDGMENT_SECONDS` server seconds."""
    study = study_import(status="open", data=study_file(slug=slug, protocol="esa", n_items=n_items, n_candidates=3,
                                                        settings={"redundancy": 2}))
    for k, annotator in enumerate(annotators_create(study=study, count=2)):
        client = annotator_client(annotator)
        while True:
            resp = client.get("/api/v1/annotate/next")
            if resp.status_code == 204:
                break
            data = resp.json()
            ids = [c["id"] for c in data["candidates"]]
            cands = {c.public_id: c for c in study.items.get(candidates__public_id=ids[0]).candidates.all()}
            item = cands[ids[0]].item.external_id
            answers = {cid: {"spans": [], "score": esa_score(k, item, cands[cid].system)} for cid in ids}
            resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"annotations": answers},
                               format="json")
            assert resp.status_code == 201, resp.content
    Judgment.objects.filter(assignment__item__study=study).update(duration_ms=JUDGMENT_SECONDS * 1000)
    return study
