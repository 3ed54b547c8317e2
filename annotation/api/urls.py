from django.urls import path

from annotation.api import schema  # noqa: F401  (registers the OpenAPI token scheme before any schema is built)
from annotation.api import views as api

urlpatterns = [
    path("annotate/next", api.NextAssignmentAPI.as_view(), name="api-annotate-next"),
    path("annotate/<str:assignment>/judgment", api.JudgmentSubmitAPI.as_view(), name="api-annotate-judgment"),
    path("annotate/<str:assignment>/skip", api.SkipAPI.as_view(), name="api-annotate-skip"),
]
