"""Study reports (staff only)."""
from django.urls import path

from research.views import judges, planning
from research.views import reports as views

app_name = "evaluators"

urlpatterns = [
    path("<slug:slug>/", views.report, name="report"),
    path("<slug:slug>/plan/", planning.plan, name="report-plan"),
    path("<slug:slug>/report.json", views.report_json, name="report-json"),
    path("<slug:slug>/judges.json", judges.judges_json, name="report-judges-json"),
    path("<slug:slug>/judges/<int:pk>.jsonl", judges.judge_labels, name="report-judge-labels"),
    path("<slug:slug>/<str:table>.csv", views.report_csv, name="report-csv"),
    path("<slug:slug>/<str:table>.<str:ext>", views.report_paper_table, name="report-paper"),
]
