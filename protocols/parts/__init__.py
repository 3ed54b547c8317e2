"""The parts of a protocol's spec by concern; :class:`protocols.spec.ProtocolSpec` combines them.

Each part holds the defaults and the documentation of the methods its concern's core code calls.
"""
