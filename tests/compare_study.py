"""A judged ranking study whose human preferences are known exactly (for the comparison tests).

Five candidates per item (reference, sys1..sys4). Every annotator gives the
same full ranking of an item; the ranking is the "true" order
reference > sys1 > sys2 > sys3 > sys4 except on the items listed in SWAPPED,
where sys1 and sys2 change places. ``true_rank(item, system)`` is that ranking,
so a metric derived from it agrees with the humans perfectly.
"""
from __future__ import annotations

from annotation.handout.services import annotators_create, assignment_next, judgment_submit
from studies.models import Study
from tests.factories import make_study

SYSTEMS = ["reference", "sys1", "sys2", "sys3", "sys4"]
SWAPPED = {"ext-1", "ext-4"}


def true_rank(item: str, system: str) -> int:
    order = list(SYSTEMS)
    if item in SWAPPED:
        order[1], order[2] = order[2], order[1]
    return order.index(system) + 1


def compare_study(slug: str = "cmp", *, n_items: int = 8, n_annotators: int = 3, spam_rate: float = 0.0) -> Study:
    study = make_study(slug=slug, protocol="ranking", n_items=n_items, n_candidates=5,
                       settings={"redundancy": n_annotators, "spam_rate": spam_rate})
    for annotator in annotators_create(study=study, count=n_annotators):
        while (assignment := assignment_next(annotator=annotator)) is not None:
            item = assignment.item
            ext = item.spam_of.external_id if item.is_spam else item.external_id
            ranks = {c.public_id: true_rank(ext, c.system) for c in item.candidates.all()}
            judgment_submit(assignment=assignment, payload={"ranks": ranks})
    return study


def score_csv(*, name: str | None = "oracle", reverse: bool = False, reference: bool = False,
              hib: str | None = "true", n_items: int = 8) -> str:
    """A score file whose scores follow (or, reversed, contradict) the humans' rankings."""
    header = ["item", "system", "score"] + (["name"] if name else []) + (["higher_is_better"] if hib else [])
    lines = [",".join(header)]
    for i in range(n_items):
        for system in SYSTEMS:
            if system == "reference" and not reference:
                continue
            score = float(true_rank(f"ext-{i}", system)) if reverse else 10.0 - true_rank(f"ext-{i}", system)
            cells = [f"ext-{i}", system, f"{score}"] + ([name] if name else []) + ([hib] if hib else [])
            lines.append(",".join(cells))
    return "\n".join(lines) + "\n"
