"""What the span protocols (MQM, ESA and its DA form) share: :class:`~protocols.spans.family.SpanFamily`."""
