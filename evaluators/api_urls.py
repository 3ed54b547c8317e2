"""Researcher API: agreement and reports (staff only)."""
from django.urls import path

urlpatterns: list = []
