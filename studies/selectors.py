"""Reads about study definitions (no annotation data): what a study file will create."""
from __future__ import annotations

import hashlib
from collections import Counter
from typing import TYPE_CHECKING, Any

from django.core.cache import cache
from django.db.models import Count, Max

from studies.controls.blinding import BlindingReport, blinding_lint
from studies.models import Candidate, Study
from studies.controls.spam import spam_count

if TYPE_CHECKING:
    from studies.importing.study_file import ParsedStudy


def study_file_summary(parsed: ParsedStudy) -> dict[str, Any]:
    """What a validated study file will create: counts, systems, phenomena, spam items, judgments needed."""
    fields = parsed.fields
    items = parsed.items
    per_item = Counter(len(i["candidates"]) for i in items)
    systems = Counter(c["system"] for i in items for c in i["candidates"])
    references = Counter(c["system"] for i in items for c in i["candidates"] if c["is_reference"])
    phenomena = Counter(i["phenomenon"] or "(none)" for i in items)
    documents = {i["document_id"] for i in items if i["document_id"]}
    spam_rate = fields.get("spam_rate", Study._meta.get_field("spam_rate").default)
    redundancy = fields.get("redundancy", Study._meta.get_field("redundancy").default)
    n_spam = spam_count(len(items), spam_rate)
    return {
        "slug": fields["slug"], "title": fields["title"], "protocol": fields["protocol"],
        "n_items": len(items), "n_documents": len(documents),
        "candidates_per_item": sorted(per_item.items()),
        "systems": sorted(systems.items()), "references": sorted(references.items()),
        "phenomena": sorted(phenomena.items()),
        "spam_rate": spam_rate, "n_spam": n_spam, "redundancy": redundancy,
        "n_needed": (len(items) + n_spam) * redundancy,
        # every other setting, once: redundancy and spam_rate are in the lines above (with what they give)
        "settings": {k: v for k, v in fields.items()
                     if k not in ("slug", "title", "protocol", "description", "redundancy", "spam_rate", "provenance")},
    }


def study_blinding_lint(*, study: Study) -> BlindingReport:
    """The blinding lint of a stored study's real items, as annotators see them (studies/controls/blinding.py).

    One query over the candidates, cached for 10 minutes under a key that changes
    with the candidates (count, last pk) and with the settings the lint reads: a
    changed setting or added candidate shows at once, a candidate text edited in
    the admin within 10 minutes; a plain reload costs one aggregate query.
    """
    real = Candidate.objects.filter(item__study=study, item__is_spam=False)
    stamp = real.aggregate(n=Count("pk"), last=Max("pk"))
    key = (f"studies.controls.blinding:{study.pk}:{stamp['n']}:{stamp['last']}:{int(study.normalise_typography)}:"
           f"{study.spam_rate}:{hashlib.sha1((study.instructions + study.question).encode()).hexdigest()}")
    report = cache.get(key)
    if report is None:
        by_item: dict[int, dict[str, Any]] = {}
        rows = real.order_by("item_id", "position", "pk").values_list(
            "item_id", "item__external_id", "text", "is_reference", "highlights")
        for item_id, external_id, text, is_reference, highlights in rows:
            entry = by_item.setdefault(item_id, {"external_id": external_id, "candidates": []})
            entry["candidates"].append({"text": text, "is_reference": is_reference, "highlights": highlights})
        report = blinding_lint(items=by_item.values(), normalise=study.normalise_typography,
                               instructions=study.instructions, question=study.question, spam_rate=study.spam_rate)
        cache.set(key, report, 600)
    return report
