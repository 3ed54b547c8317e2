from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.authtoken.models import Token

from studies.access.audit import audit


class Command(BaseCommand):
    help = "Print the researcher API token of a staff user (created on first use); --reset makes a new one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--reset", action="store_true", help="Replace the existing token.")

    def handle(self, *args, **options) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"username: no user {options['username']!r}")
        if not user.is_staff:
            raise CommandError(f"username: {user.username!r} is not staff; the researcher API is staff only")
        if options["reset"]:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
        if created:
            audit(None, "api_token_created", None, for_user=user.username, reset=options["reset"])
        self.stdout.write(token.key)
