"""Every researcher page and researcher API endpoint (staff only).

The namespaces ``studies`` and ``evaluators`` and the un-namespaced compare and
API names are the ones templates, redirects and tests ``reverse``; the URLs are
the ones researchers bookmark and docs quote.
"""
from django.urls import include, path

from research.views.docs import doc_page
from research.views.home import home

urlpatterns = [
    path("", home, name="home"),
    path("studies/", include("research.urls.studies")),
    path("reports/", include("research.urls.compare")),
    path("reports/", include("research.urls.reports")),
    path("api/v1/", include("research.urls.api")),
    path("help/<path:name>", doc_page, name="docs"),  # docs/*.md rendered for staff (research/views/docs.py)
]
