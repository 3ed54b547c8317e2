"""The admin side of per-study access (studies/access/rules.py, docs/access.md).

:class:`StudyScopedAdmin` is the base of every admin whose rows belong to a study
(studies, items, annotators, assignments, judgments, evaluators, scores, jobs):

* the changelist, the change form, the history and the delete page only reach
  rows of studies the user has a role on (``get_queryset``), so any other row
  is answered exactly as a row that does not exist;
* viewing needs ``view_action`` on the row's study, changing ``change_action``;
  deleting is for superusers only (and Django's model permissions still apply to them);
* actions declare ``permissions=["manage"]`` or ``["analyse"]``: the admin offers
  them only to users who are a manager (an analyst) of at least one study, and
  each action then checks the role on every selected study (403 otherwise).

Superusers keep Django's model permissions (and every read-only rule below);
other staff need no model permission: their roles decide.
"""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from studies.access import rules as access
from studies.models import Study


def _superuser(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_superuser)


def _any_role(request: HttpRequest, action: str) -> bool:
    """``has_any_role`` asked once per request and role: the admin asks it for every model of the app list and
    every action, which made a changelist cost one query per question (about 50) for a researcher."""
    memo: dict[str, bool] = request.__dict__.setdefault("_study_any_role", {})
    needs = access.ACTIONS[action]
    if needs not in memo:
        memo[needs] = access.has_any_role(request.user, action)
    return memo[needs]


class StudyScopedAdmin(admin.ModelAdmin):
    #: The lookup from this admin's model to its study ("" for Study itself).
    study_path: str = "study"
    view_action: str = "view"
    change_action: str | None = "settings"

    def study_of(self, obj: Model) -> Study:
        if not self.study_path:
            assert isinstance(obj, Study)
            return obj
        value: Any = obj
        for part in self.study_path.split("__"):
            value = getattr(value, part)
        return value

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        if _superuser(request):
            return qs
        visible = access.studies_with_role(request.user, self.view_action).values("pk")
        return qs.filter(**{f"{self.study_path}__in" if self.study_path else "pk__in": visible})

    def has_module_permission(self, request: HttpRequest) -> bool:
        if _superuser(request):
            return super().has_module_permission(request)
        return _any_role(request, self.view_action)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _superuser(request):
            return super().has_view_permission(request, obj)
        if obj is None:
            return _any_role(request, self.view_action)
        return access.can(request.user, self.view_action, self.study_of(obj))

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if _superuser(request):
            return super().has_change_permission(request, obj)
        if self.change_action is None:
            return False
        if obj is None:
            return _any_role(request, self.change_action)
        return access.can(request.user, self.change_action, self.study_of(obj))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _superuser(request) and super().has_delete_permission(request, obj)

    # Action permissions (``@admin.action(permissions=[...])``): offered when the role exists on some study.
    def has_manage_permission(self, request: HttpRequest) -> bool:
        return _superuser(request) or _any_role(request, "settings")

    def has_analyse_permission(self, request: HttpRequest) -> bool:
        return _superuser(request) or _any_role(request, "export")


def related_only(field: str) -> tuple[str, type[admin.RelatedOnlyFieldListFilter]]:
    """A list filter on a study (or evaluator...) offering only the values present in the visible rows."""
    return (field, admin.RelatedOnlyFieldListFilter)
