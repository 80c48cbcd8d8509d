"""Serving: ``load_bot`` for other programs, and the stdio JSON server (``python -m agents.serving``)."""
