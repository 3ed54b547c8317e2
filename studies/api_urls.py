"""Researcher API (staff only)."""
from django.urls import path

from . import api

urlpatterns = [
    path("studies/", api.StudyListAPI.as_view(), name="api-studies"),
    path("studies/<slug:slug>/judgments", api.StudyJudgmentsAPI.as_view(), name="api-study-judgments"),
]
