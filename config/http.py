"""The request type of views that read ``request.htmx``.

``django_htmx.middleware.HtmxMiddleware`` (config/settings.py) sets
``request.htmx`` on every request; Django's ``HttpRequest`` does not declare it,
so views that branch on htmx take this subclass in their signature (the
pattern django-htmx documents for type checking). Types only: at run time the
request is Django's own.
"""
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
