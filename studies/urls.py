"""Researcher pages (staff only)."""
from django.urls import path

from . import views, views_quality

app_name = "studies"

urlpatterns = [
    path("", views.study_list, name="list"),
    # Before "<slug>/" so that "import" is never read as a study's slug.
    path("import/", views.study_import, name="import"),
    path("<slug:slug>/", views.study_detail, name="detail"),
    path("<slug:slug>/invite/", views.study_invite, name="invite"),
    path("<slug:slug>/export.<str:fmt>", views.study_export, name="export"),
    path("<slug:slug>/quality/", views_quality.study_quality_page, name="quality"),
    path("<slug:slug>/quality/apply-rule/", views_quality.quality_apply_rule, name="quality-apply-rule"),
    path("<slug:slug>/quality/<str:code>/exclude/", views_quality.quality_exclude, name="quality-exclude"),
    path("<slug:slug>/quality/<str:code>/include/", views_quality.quality_include, name="quality-include"),
]
