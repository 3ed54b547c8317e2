"""Study reports (staff only)."""
from django.urls import path

from research.views import planning
from research.views import reports as views

app_name = "evaluators"

urlpatterns = [
    path("<slug:slug>/", views.report, name="report"),
    path("<slug:slug>/plan/", planning.plan, name="report-plan"),
    path("<slug:slug>/report.json", views.report_json, name="report-json"),
    path("<slug:slug>/<str:table>.csv", views.report_csv, name="report-csv"),
    path("<slug:slug>/<str:table>.<str:ext>", views.report_paper_table, name="report-paper"),
]
