"""One status for anonymous researcher API requests: 401 with WWW-Authenticate; query parameters
validated with their ranges (seed 0..2³²−1: `compare?seed=-1` was a 500)."""
import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import make_study

pytestmark = pytest.mark.django_db

ENDPOINTS = ["/api/v1/studies/", "/api/v1/studies/s/judgments", "/api/v1/studies/s/agreement",
             "/api/v1/studies/s/compare"]  # the schema itself is public


@pytest.mark.parametrize("path", ENDPOINTS)
def test_anonymous_gets_401_with_www_authenticate(path):
    make_study(slug="s", n_items=2)
    response = APIClient().get(path)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert "detail" in response.json()


@pytest.mark.parametrize("path", ENDPOINTS)
def test_non_staff_token_gets_403(path):
    make_study(slug="s", n_items=2)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=User.objects.create_user('u')).key}")
    assert client.get(path).status_code == 403


@pytest.mark.parametrize("endpoint", ["compare", "agreement"])
@pytest.mark.parametrize("query, field", [("seed=-1", "seed"), ("seed=4294967296", "seed"),
                                          ("bootstrap=0", "bootstrap"), ("seed=abc", "seed")])
def test_out_of_range_parameters_are_named_400s(admin_user, endpoint, query, field):
    make_study(slug="s", n_items=2)
    client = APIClient()
    client.force_authenticate(admin_user)
    response = client.get(f"/api/v1/studies/s/{endpoint}?{query}")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
