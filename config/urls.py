from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from studies.importing.schema import study_file_schema_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("research.urls")),  # researcher pages and API: studies/, reports/, api/v1/studies/
    path("api/v1/", include("annotation.api.urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Browsable docs of the same schema, readable by whoever may read the schema (SERVE_PERMISSIONS).
    # The JSON Schema of a study file (docs/study-file.md), public: editors fetch it by URL.
    path("api/v1/study-file.schema.json", study_file_schema_view, name="study-file-schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("annotation.urls")),
    # Pages link the icon (base.html); clients that ask for /favicon.ico anyway get it too, not a 404.
    path("favicon.ico", RedirectView.as_view(url=static("img/favicon.svg"), permanent=True)),
]

# JSON errors under /api/, and 503 instead of 500 when the database is unreachable (config/errors.py).
handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"
