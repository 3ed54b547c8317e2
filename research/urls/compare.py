"""The human-vs-evaluator comparison page and its forms (staff only), under ``reports/``."""
from django.urls import path

from research.views import compare

urlpatterns = [
    path("<slug:slug>/compare/", compare.compare_page, name="compare-report"),
    path("<slug:slug>/compare/run", compare.compare_run, name="compare-run"),
    path("<slug:slug>/compare/import", compare.compare_import, name="compare-import"),
    path("<slug:slug>/compare/jobs", compare.compare_jobs, name="compare-jobs"),
    path("<slug:slug>/compare/<str:part>/", compare.compare_detail, name="compare-detail"),
]
