"""URLs of the human-vs-evaluator comparison: the staff page, its forms, and the researcher API.

Mounted at the site root by config/urls.py (one line) so the page lives under
``reports/`` and the API under ``api/v1/`` like their siblings.
"""
from django.urls import path

from . import compare_views

urlpatterns = [
    path("reports/<slug:slug>/compare/", compare_views.compare_page, name="compare-report"),
    path("reports/<slug:slug>/compare/run", compare_views.compare_run, name="compare-run"),
    path("reports/<slug:slug>/compare/import", compare_views.compare_import, name="compare-import"),
    path("api/v1/studies/<slug:slug>/compare", compare_views.StudyCompareAPI.as_view(), name="api-study-compare"),
]
