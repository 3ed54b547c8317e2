"""``item_key`` in ``GET next``: the same for every annotator and request of an item, and telling nothing."""
from __future__ import annotations

import re

import pytest
from django.test import override_settings

from annotation.items.item_keys import item_key
from annotation.handout.services import annotators_create
from studies.models import Item
from tests.conftest import annotator_client
from tests.factories import make_study

pytestmark = pytest.mark.django_db


def rank(client, data) -> None:
    ranks = {c["id"]: k + 1 for k, c in enumerate(data["candidates"])}
    resp = client.post(f"/api/v1/annotate/{data['assignment']}/judgment", {"ranks": ranks}, format="json")
    assert resp.status_code == 201


def keys_seen(client) -> dict[int, str]:
    """Item pk → the item_key served, for everything this annotator is given."""
    seen: dict[int, str] = {}
    while (resp := client.get("/api/v1/annotate/next")).status_code == 200:
        data = resp.json()
        assert client.get("/api/v1/annotate/next").json()["item_key"] == data["item_key"]  # every request
        pk = Item.objects.get(candidates__public_id=data["candidates"][0]["id"]).pk
        seen[pk] = data["item_key"]
        rank(client, data)
    return seen


def test_the_same_item_has_the_same_key_for_every_annotator_and_different_items_differ():
    study = make_study(slug="keys", n_items=6, settings={"redundancy": 3})
    seen = [keys_seen(annotator_client(a)) for a in annotators_create(study=study, count=3)]
    assert seen[0] == seen[1] == seen[2]  # every annotator judged every item (redundancy 3), same keys
    assert set(seen[0]) == set(study.items.values_list("pk", flat=True))
    assert len(set(seen[0].values())) == 6
    assert all(key == item_key(pk) for pk, key in seen[0].items())


def test_the_key_reveals_neither_the_database_id_nor_the_external_id():
    study = make_study(slug="opaque", n_items=3, settings={"redundancy": 1})
    for item in study.items.all():
        key = item_key(item.pk)
        assert re.fullmatch(r"[0-9a-f]{32}", key)
        assert str(item.pk) != key and item.external_id not in key
        # Consecutive items do not get related keys (no shared prefix beyond chance).
        assert item_key(item.pk + 1)[:8] != key[:8]


def test_the_key_depends_on_the_secret_key_so_it_cannot_be_computed_from_the_id():
    with override_settings(SECRET_KEY="one secret " * 5):
        first = item_key(7)
        assert item_key(7) == first  # stable
    with override_settings(SECRET_KEY="another secret " * 5):
        assert item_key(7) != first
