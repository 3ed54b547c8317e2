"""Annotation protocols as plug-ins (docs/architecture.md, "How to add a protocol").

``spec.py`` says what a protocol is (:class:`~protocols.spec.ProtocolSpec`),
``registry.py`` keeps the registered ones, and each sub-package is one protocol:
a Django app whose ``ready()`` registers its spec. The apps' core code asks
``protocol_for(study)`` and never branches on a protocol's name.
"""
