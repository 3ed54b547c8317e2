from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("studies/", include("studies.urls")),
    path("", include("evaluators.compare_urls")),  # reports/<slug>/compare/ and api/v1/studies/<slug>/compare
    path("reports/", include("evaluators.urls")),
    path("api/v1/", include("annotation.api_urls")),
    path("api/v1/", include("studies.api_urls")),
    path("api/v1/", include("evaluators.api_urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("", include("annotation.urls")),
]
