"""``/``: staff to the dashboard, anyone else a short page with the researchers' login link."""
import pytest
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db


def test_staff_are_sent_to_the_dashboard(admin_client):
    response = admin_client.get("/")
    assert response.status_code == 302 and response["Location"] == "/studies/"


def test_anonymous_visitors_get_a_short_page_with_the_login_link():
    response = Client().get("/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/admin/login/?next=%2Fstudies%2F" in text
    assert "invitation" in text


def test_logged_in_non_staff_get_the_page_not_the_dashboard():
    User.objects.create_user("someone", password="pw")
    client = Client()
    client.login(username="someone", password="pw")
    response = client.get("/")
    assert response.status_code == 200 and b"log in" in response.content
