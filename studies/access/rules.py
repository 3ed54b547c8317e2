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

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import CommandError
from django.db.models import Q, QuerySet
from django.http import Http404

from studies.access.audit import audit
from studies.cli import text_argument
from studies.models import Role, Study, StudyMembership

#: The members form's choice that makes a user the study's owner (superusers only).
OWNER = "owner"

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


def role_of(user: Any, study: Study) -> str | None:
    """The user's role on the study (the owner: manager; superusers: manager; members: their role), or None.

    A study without an owner (a legacy one, or one whose owner's account was deleted) gives no staff account
    a role by default: only superusers and the members it has see it, until a superuser gives it an owner."""
    if not _authenticated(user):
        return None
    if user.is_superuser or (study.owner_id is not None and study.owner_id == user.pk):
        return Role.MANAGER
    return StudyMembership.objects.filter(study=study, user=user).values_list("role", flat=True).first()


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
    return Study.objects.filter(Q(owner=user) | Q(pk__in=StudyMembership.objects.filter(user=user).values("study")))


def studies_with_role(user: Any, action: str) -> QuerySet[Study]:
    """The studies on which the user may take ``action``."""
    if not _authenticated(user):
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    roles = [r for r in ROLE_ORDER if _rank(r) >= _rank(ACTIONS[action])]
    member = StudyMembership.objects.filter(user=user, role__in=roles).values("study")
    return Study.objects.filter(Q(owner=user) | Q(pk__in=member))


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


    username = username.strip()
    if role != "remove" and role not in (*ROLE_ORDER, OWNER):
        raise ValidationError({"role": [f"{role!r} is not one of {', '.join(ROLE_ORDER)}, {OWNER}, remove."]})
    if role == OWNER and not (_authenticated(by) and by.is_superuser):
        raise ValidationError({"role": ["only a superuser gives a study its owner"]})
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
    if role == OWNER:
        return _owner_set(study=study, user=user, by=by, via=via)
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


def _owner_set(*, study: Study, user: Any, by: Any, via: str) -> str:
    """Make ``user`` the study's owner (a superuser's decision; a member row of theirs gives way to it)."""

    before = study.owner.get_username() if study.owner is not None else ""
    StudyMembership.objects.filter(study=study, user=user).delete()
    Study.objects.filter(pk=study.pk).update(owner=user)
    study.owner = user
    audit(by, "settings_changed", study, fields=["owner"], owner=user.get_username(), before=before, via=via)
    return f"{user.get_username()} now owns {study.slug}."


#: The ``--user`` option's help, shared by every command that takes it.
USER_OPTION_HELP = ("Act as this user: the command refuses a study the user has no role on (as if it did not exist) "
                    "or a role too low, and the audit log names the user. Without --user the command runs as the "
                    "server's administrator (every study; docs/access.md).")


def command_user(username: str | None) -> Any:
    """The ``--user`` of a management command: None without it (the administrator), else an active user."""

    if username is None:
        return None
    text_argument(username, "--user")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise CommandError(f"--user: no active user {username!r}")
    return user


#: The ``--user`` help of the commands that create a study.
OWNER_OPTION_HELP = ("The new study's owner (a manager of it; docs/access.md), named in the audit log. Without it the "
                     "server's only superuser owns it; with several superusers, or none, the command refuses.")


def command_owner(username: str | None) -> Any:
    """The owner of a study a command creates: ``--user``, else the server's only superuser (no study is ownerless).

    CommandError, before anything is stored, when ``--user`` names no active user, or without it when the server
    has no superuser or several (the command cannot choose between them).
    """

    if username is not None:
        return command_user(username)
    superusers = list(get_user_model().objects.filter(is_superuser=True, is_active=True).order_by("username")[:6])
    if len(superusers) == 1:
        return superusers[0]
    if not superusers:
        raise CommandError("--user: give the new study's owner (USERNAME of a staff account): this server has no "
                           "superuser to own it; nothing stored")
    names = ", ".join(u.get_username() for u in superusers[:5]) + (", …" if len(superusers) > 5 else "")
    raise CommandError(f"--user: give the new study's owner: this server has several superusers ({names}) and "
                       "the command does not choose one; nothing stored")


def command_study(slug: str, user: Any, action: str, *, not_found: str | None = None) -> Study:
    """The study ``slug`` for a command run by ``user`` (None: the administrator); CommandError naming what failed.

    A user without a role on the study gets the same message as for a slug that does not exist.
    """

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
