"""Researcher API (staff only)."""
from django.urls import path

urlpatterns: list = []
