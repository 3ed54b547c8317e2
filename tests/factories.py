"""Small builders for tests: study files and stored studies."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from studies.importing.study_file import study_import
from studies.models import Study, StudyMembership

#: The personas of the test suite (tests/conftest.py): usernames are ``p-<name>``, so they never clash with
#: the accounts a test makes itself.
PERSONAS = ("owner", "viewer", "analyst", "manager", "outsider")


def persona(name: str) -> Any:
    """The staff account of a persona (made on first use): ``owner`` owns the studies :func:`make_study` makes,
    ``viewer``/``analyst``/``manager`` get a role with :func:`member_of`, ``outsider`` has none. Not superusers:
    the per-study access rule (studies/access/rules.py) decides what each of them sees."""
    if name not in PERSONAS:
        raise ValueError(f"persona: {name!r} is not one of {', '.join(PERSONAS)}")
    user, _ = get_user_model().objects.get_or_create(username=f"p-{name}", defaults={"is_staff": True})
    return user


def member_of(study: Study, role: str, user: Any = None) -> Any:
    """``user`` (default: the persona named like the role) as a member of ``study`` with ``role``."""
    user = user if user is not None else persona(role)
    StudyMembership.objects.update_or_create(study=study, user=user, defaults={"role": role})
    return user


def owned(study: Study, owner: Any = "owner") -> Study:
    """``study`` given ``owner`` (a user, a persona's name, or None: ownerless, seen by superusers only)."""
    user = persona(owner) if isinstance(owner, str) else owner
    Study.objects.filter(pk=study.pk).update(owner=user)
    study.owner = user
    return study


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


def owned_import(*, data: Any, status: str | None = None, owner: Any = "owner") -> Study:
    """``study_import`` of a test's own study file, the study given ``owner`` (see :func:`owned`)."""
    return owned(study_import(data=data, status=status), owner)


def make_study(*, status: str = "open", owner: Any = "owner", **kwargs: Any) -> Study:
    """An imported study, open by default (imports default to draft; most tests hand out work at once), owned by
    the ``owner`` persona unless ``owner`` says otherwise (see :func:`owned`)."""
    return owned(study_import(data=study_file(**kwargs), status=status), owner)
