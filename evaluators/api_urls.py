"""Researcher API: agreement and reports (staff only)."""
from django.urls import path

from . import api

urlpatterns = [
    path("studies/<slug:slug>/agreement", api.StudyAgreementAPI.as_view(), name="api-study-agreement"),
]
