"""Who may do what on which study: the object-level rule (docs/access.md).

A study has an owner and members, each with one role: ``viewer`` < ``analyst`` <
``manager``. The owner counts as a manager. A superuser may do everything on every
study. Every researcher page, API endpoint, admin view/action and management
command run with ``--user`` asks this module, with one of the :data:`ACTIONS`.

A user with no role on a study must not learn that it exists: :func:`study_for`
raises ``Http404`` exactly as for a slug that does not exist; a role too low for
the action raises ``PermissionDenied`` (403).
"""
from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404

from studies.cli import text_argument
from studies.models import Role, Study, StudyMembership

#: Roles, lowest first; a higher role may do everything a lower one may.
ROLE_ORDER: tuple[str, ...] = (Role.VIEWER, Role.ANALYST, Role.MANAGER)

#: Every action a researcher can take on a study, and the lowest role that may take it.
ACTIONS: dict[str, str] = {
    "view": Role.VIEWER,        # the study page, progress, the study list
    "report": Role.VIEWER,      # the report page and its JSON/tables, the agreement API and command
    "preview": Role.ANALYST,    # the annotator's view of the items
    "quality": Role.ANALYST,    # the quality page, one annotator's page
    "compare": Role.ANALYST,    # the compare page, API and command
    "export": Role.ANALYST,     # raw judgments: export page/API/action/command, the ratings table
    "audit": Role.ANALYST,      # the study's audit log on its page, export_judgments --audit
    "settings": Role.MANAGER,   # the admin change form, normalise typography, copy, generated studies, spam
    "lifecycle": Role.MANAGER,  # draft / pilot / open / closed
    "invite": Role.MANAGER,     # invitations and their links
    "exclude": Role.MANAGER,    # exclusions, re-inclusions, the automatic rule
    "scores": Role.MANAGER,     # importing scores, running evaluators
    "members": Role.MANAGER,    # adding and removing members
}


def _rank(role: str | None) -> int:
    return ROLE_ORDER.index(role) + 1 if role in ROLE_ORDER else 0


def _authenticated(user: Any) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False) and getattr(user, "is_active", False))


def _shared() -> Q:
    """Studies nobody has claimed: no owner and no member. Every staff account manages them, as before
    per-study access existed (one research group per server; scripts that import with no ``--user`` and
    read the researcher API with a staff token, INTERFACES.md). Giving one an owner or a member makes it
    private to them."""
    return Q(owner__isnull=True) & ~Q(pk__in=StudyMembership.objects.values("study"))


def _is_shared(study: Study) -> bool:
    return study.owner_id is None and not StudyMembership.objects.filter(study=study).exists()


def role_of(user: Any, study: Study) -> str | None:
    """The user's role on the study (the owner: manager; superusers: manager; any staff account on a shared,
    unclaimed study: manager), or None."""
    if not _authenticated(user):
        return None
    if user.is_superuser or (study.owner_id is not None and study.owner_id == user.pk):
        return Role.MANAGER
    role = StudyMembership.objects.filter(study=study, user=user).values_list("role", flat=True).first()
    if role is None and user.is_staff and _is_shared(study):
        return Role.MANAGER
    return role


def role_allows(role: str | None, action: str) -> bool:
    """True when ``role`` is at least the one ``action`` needs (KeyError for an unknown action)."""
    return _rank(role) >= _rank(ACTIONS[action]) and role is not None


def can(user: Any, action: str, study: Study) -> bool:
    """True when the user may take ``action`` (a key of :data:`ACTIONS`) on the study."""
    return role_allows(role_of(user, study), action)


def studies_visible_to(user: Any) -> QuerySet[Study]:
    """The studies the user has any role on (all of them for a superuser, none for an anonymous user)."""
    if not _authenticated(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    shared = _shared() if user.is_staff else Q(pk__in=[])
    return Study.objects.filter(Q(owner=user) | Q(pk__in=StudyMembership.objects.filter(user=user).values("study"))
                                | shared)


def studies_with_role(user: Any, action: str) -> QuerySet[Study]:
    """The studies on which the user may take ``action``."""
    if not _authenticated(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    roles = [r for r in ROLE_ORDER if _rank(r) >= _rank(ACTIONS[action])]
    member = StudyMembership.objects.filter(user=user, role__in=roles).values("study")
    shared = _shared() if user.is_staff else Q(pk__in=[])
    return Study.objects.filter(Q(owner=user) | Q(pk__in=member) | shared)


def has_any_role(user: Any, action: str) -> bool:
    """True when there is at least one study on which the user may take ``action`` (admin action lists)."""
    return studies_with_role(user, action).exists()


def check(user: Any, action: str, study: Study) -> Study:
    """``study`` if the user may take ``action``; Http404 without any role, PermissionDenied when it is too low."""
    role = role_of(user, study)
    if role is None:
        raise Http404("No study matches the given query.")
    if not role_allows(role, action):
        raise PermissionDenied(f"Your role on this study ({role}) does not allow {action}.")
    return study


def study_for(user: Any, slug: str, action: str) -> Study:
    """The study ``slug`` for a request: 404 when it does not exist or the user has no role, 403 when too low."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise Http404("No study matches the given query.")
    return check(user, action, study)


def members_of(study: Study) -> list[dict[str, Any]]:
    """The study page's member list: the owner first, then members by username."""
    rows: list[dict[str, Any]] = []
    if study.owner is not None:
        rows.append({"username": study.owner.get_username(), "role": Role.MANAGER, "owner": True})
    for m in study.memberships.select_related("user").order_by("user__username"):
        if m.user_id != study.owner_id:
            rows.append({"username": m.user.get_username(), "role": m.role, "owner": False})
    return rows


def study_created_by(study: Study, user: Any, *, how: str, **details: Any) -> Study:
    """Make the creator (a logged-in or ``--user`` user) the study's owner and record the import in the audit log."""
    from studies.audit import audit

    if _authenticated(user) and study.owner_id is None:
        Study.objects.filter(pk=study.pk).update(owner=user)
        study.owner = user
    audit(user, "study_imported", study, how=how, **details)
    return study


def membership_set(*, study: Study, username: str, role: str, by: Any = None, via: str = "page") -> str:
    """Give ``username`` the ``role`` on the study, or take it away (``role="remove"``); recorded in the audit log.

    ValidationError naming the field: an unknown user or role, or the owner (always a manager, not a member row).
    Returns a sentence saying what changed.
    """
    from django.contrib.auth import get_user_model
    from django.core.exceptions import ValidationError

    from studies.audit import audit

    username = username.strip()
    if role != "remove" and role not in ROLE_ORDER:
        raise ValidationError({"role": [f"{role!r} is not one of {', '.join(ROLE_ORDER)}, remove."]})
    user = get_user_model().objects.filter(username=username).first() if username else None
    if user is None:
        raise ValidationError({"username": [f"no user {username!r}" if username else "give a username"]})
    if role != "remove" and not (user.is_active and user.is_staff):
        raise ValidationError({"username": [f"{username!r} is not an active staff account: researchers sign in "
                                            "through the admin's login, so an administrator must tick "
                                            "\"Staff status\" first"]})
    if study.owner_id == user.pk:
        raise ValidationError({"username": [f"{username!r} owns this study (always a manager); "
                                            "change the owner in the admin"]})
    current = StudyMembership.objects.filter(study=study, user=user).first()
    if role == "remove":
        if current is None:
            raise ValidationError({"username": [f"{username!r} is not a member of this study"]})
        current.delete()
        audit(by, "member_removed", study, member=username, role=current.role, via=via)
        return f"{username} removed from {study.slug}."
    if current is None:
        StudyMembership.objects.create(study=study, user=user, role=role)
        audit(by, "member_added", study, member=username, role=role, via=via)
        return f"{username} added to {study.slug} as {role}."
    if current.role != role:
        before = current.role
        current.role = role
        current.save(update_fields=["role"])
        audit(by, "member_changed", study, member=username, before=before, role=role, via=via)
    return f"{username} is {role} on {study.slug}."


#: The ``--user`` option's help, shared by every command that takes it.
USER_OPTION_HELP = ("Act as this user: the command refuses a study the user has no role on (as if it did not exist) "
                    "or a role too low, and the audit log names the user. Without --user the command runs as the "
                    "server's administrator (every study), as before (docs/access.md).")


def command_user(username: str | None) -> Any:
    """The ``--user`` of a management command: None without it (the administrator), else an active user."""
    from django.contrib.auth import get_user_model
    from django.core.management.base import CommandError

    if username is None:
        return None
    text_argument(username, "--user")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"--user: no active user {username!r}")
    return user


def command_study(slug: str, user: Any, action: str, *, not_found: str | None = None) -> Study:
    """The study ``slug`` for a command run by ``user`` (None: the administrator); CommandError naming what failed.

    A user without a role on the study gets the same message as for a slug that does not exist.
    """
    from django.core.management.base import CommandError

    text_argument(slug, "slug")
    study = Study.objects.filter(slug=slug).first()
    message = not_found or f"slug: no study {slug!r}"
    if study is None:
        raise CommandError(message)
    if user is None:
        return study
    role = role_of(user, study)
    if role is None:
        raise CommandError(message)
    if not role_allows(role, action):
        raise CommandError(f"--user: {user.get_username()} is {role} on {slug}; {action} needs {ACTIONS[action]} "
                           "or above")
    return study
