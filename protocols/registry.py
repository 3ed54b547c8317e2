"""The registered protocols: each protocol app registers its spec in ``AppConfig.ready()``.

Core code reaches a protocol through :func:`protocol_for` (a study) or
:func:`protocol_named` (a name read from a file); both raise
:class:`UnknownProtocol` for a name no installed app registered.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError

if TYPE_CHECKING:
    from protocols.spec import ProtocolSpec

_REGISTRY: dict[str, ProtocolSpec] = {}


class UnknownProtocol(LookupError):
    """A protocol name that no installed protocol app registered."""


def register(spec: ProtocolSpec) -> ProtocolSpec:
    """Add a protocol; a second registration of the same name is a programming error."""
    if not spec.name or not spec.name.isidentifier():
        raise ValueError(f"A protocol's name must be an identifier, not {spec.name!r}.")
    if spec.name in _REGISTRY and type(_REGISTRY[spec.name]) is not type(spec):
        raise ValueError(f"Two protocols are named {spec.name!r}: {type(_REGISTRY[spec.name]).__name__} and "
                         f"{type(spec).__name__}.")
    _REGISTRY[spec.name] = spec
    return spec


def registered() -> list[ProtocolSpec]:
    """Every registered protocol, in registration order (INSTALLED_APPS order)."""
    return list(_REGISTRY.values())


def names() -> list[str]:
    return list(_REGISTRY)


def protocol_named(name: str) -> ProtocolSpec:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownProtocol(f"{name!r} is not one of {', '.join(_REGISTRY)}") from None


def protocol_for(study: Any) -> ProtocolSpec:
    """The spec of a study (anything with a ``protocol`` name: a Study, a parsed study file's row)."""
    return protocol_named(study.protocol)


def choices() -> list[tuple[str, str]]:
    """(name, label) pairs for forms and the admin."""
    return [(spec.name, spec.label) for spec in _REGISTRY.values()]


def validate_protocol_name(value: str) -> None:
    """Model-field validator of ``Study.protocol``: a registered name."""
    if value not in _REGISTRY:
        raise ValidationError(f"{value!r} is not a registered protocol ({', '.join(_REGISTRY)}).", code="unknown_protocol")
