"""Researcher API (staff only): studies, their judgments, agreement reports and comparisons."""
from django.urls import path

from research import api, api_reports
from research.views import compare

urlpatterns = [
    path("studies/", api.StudyListAPI.as_view(), name="api-studies"),
    path("studies/<slug:slug>/judgments", api.StudyJudgmentsAPI.as_view(), name="api-study-judgments"),
    path("studies/<slug:slug>/agreement", api_reports.StudyAgreementAPI.as_view(), name="api-study-agreement"),
    path("studies/<slug:slug>/compare", compare.StudyCompareAPI.as_view(), name="api-study-compare"),
]
