"""Study reports (staff only)."""
from django.urls import path

app_name = "evaluators"

urlpatterns: list = []
