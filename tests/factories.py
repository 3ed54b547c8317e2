"""Small builders for tests: study files and stored studies."""
from __future__ import annotations

from typing import Any

from studies.importing.study_file import study_import
from studies.models import Study


def study_file(*, slug: str = "s", protocol: str = "ranking", n_items: int = 10, n_candidates: int = 3,
               settings: dict[str, Any] | None = None, documents: int = 0, phenomena: tuple[str, ...] = ()) -> dict:
    """A valid study file: systems 'reference', 'sys1', 'sys2', …; the reference first."""
    items = []
    for i in range(n_items):
        cands = [{"system": "reference" if k == 0 else f"sys{k}",
                  "text": f"Item {i} candidate {k} says something rather long about it.",
                  "is_reference": k == 0, "highlights": [[0, 4]]} for k in range(n_candidates)]
        item: dict[str, Any] = {"id": f"ext-{i}", "source": f"Quelle {i}.", "source_context": [f"SC {i}a", f"SC {i}b"],
                                "target_context": [f"TC {i}a", f"TC {i}b"], "candidates": cands}
        if documents:
            item["document_id"] = f"doc-{i % documents}"
            item["position"] = i // documents
        if phenomena:
            item["phenomenon"] = phenomena[i % len(phenomena)]
        items.append(item)
    base = {"redundancy": 2, "allow_ties": False, "spam_rate": 0.0, "unit": "sentence", "instructions": "Rank them."}
    base.update(settings or {})
    return {"slug": slug, "title": f"Study {slug}", "protocol": protocol, "settings": base, "items": items}


def make_study(*, status: str = "open", **kwargs: Any) -> Study:
    """An imported study, open by default (imports default to draft; most tests hand out work at once)."""
    return study_import(data=study_file(**kwargs), status=status)
