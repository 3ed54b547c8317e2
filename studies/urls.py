"""Researcher pages (staff only)."""
from django.urls import path

from . import views

app_name = "studies"

urlpatterns = [
    path("", views.study_list, name="list"),
    # Before "<slug>/" so that "import" is never read as a study's slug.
    path("import/", views.study_import, name="import"),
    path("<slug:slug>/", views.study_detail, name="detail"),
    path("<slug:slug>/invite/", views.study_invite, name="invite"),
    path("<slug:slug>/export.<str:fmt>", views.study_export, name="export"),
]
