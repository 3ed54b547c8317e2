"""The opaque item key the annotation API serves with each item (``item_key``).

A client that caches or logs per item needs a name for the item that is the
same for every annotator and every request, yet tells nothing: not the database
id (which counts items and would let a client guess its neighbours), not the
study file's external id, not a system name. The key is an HMAC-SHA256 of the
item's primary key under the site's SECRET_KEY (Django's ``salted_hmac`` with a
salt of its own, so it is not interchangeable with any other signature the site
makes), cut to 32 hex digits (128 bits). Stable as long as SECRET_KEY is;
rotating the key changes every item key (nothing is stored, so nothing needs a
migration).
"""
from __future__ import annotations

from django.utils.crypto import salted_hmac

_SALT = "annotation.item_key"
#: Hex digits kept: 128 bits, far beyond any collision among a study's items.
KEY_LENGTH = 32


def item_key(item_pk: int) -> str:
    """The item's opaque, stable key (module docstring)."""
    return salted_hmac(_SALT, str(item_pk), algorithm="sha256").hexdigest()[:KEY_LENGTH]
