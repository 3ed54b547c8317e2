"""The Django admin for studies, items, candidates and per-study access.

Django's autodiscovery imports this package; importing the modules registers
their model admins.
"""

from studies.admin import access, actions, studies  # noqa: F401  (registers the model admins)
