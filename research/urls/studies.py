"""Researcher pages (staff only)."""
from django.urls import path

from research.views import annotator as views_annotator
from research.views import invitations as views_invitations
from research.views import preview as views_preview
from research.views import quality as views_quality
from research.views import studies as views

app_name = "studies"

urlpatterns = [
    path("", views.study_list, name="list"),
    # Before "<slug>/" so that "import" is never read as a study's slug.
    path("import/", views.study_import, name="import"),
    path("<slug:slug>/", views.study_detail, name="detail"),
    path("<slug:slug>/invite/", views.study_invite, name="invite"),
    path("<slug:slug>/prolific/", views_invitations.study_prolific, name="prolific"),
    path("<slug:slug>/links.csv", views_invitations.study_links_csv, name="links-csv"),
    path("<slug:slug>/annotators/<str:code>/", views_annotator.annotator_page, name="annotator"),
    path("<slug:slug>/preview/", views_preview.study_preview, name="preview"),
    path("<slug:slug>/status/", views.study_set_status, name="status"),
    path("<slug:slug>/members/", views.study_members, name="members"),
    path("<slug:slug>/normalise-typography/", views.study_normalise_typography, name="normalise-typography"),
    path("<slug:slug>/export.<str:fmt>", views.study_export, name="export"),
    path("<slug:slug>/quality/", views_quality.study_quality_page, name="quality"),
    path("<slug:slug>/quality/apply-rule/", views_quality.quality_apply_rule, name="quality-apply-rule"),
    path("<slug:slug>/quality/<str:code>/exclude/", views_quality.quality_exclude, name="quality-exclude"),
    path("<slug:slug>/quality/<str:code>/include/", views_quality.quality_include, name="quality-include"),
]
