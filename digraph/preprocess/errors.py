"""Exceptions of the preprocessing stage."""

from ..errors import DigraphError

__all__ = ["CacheError"]


class CacheError(DigraphError, ValueError):
    """A path cache cannot be used: absent, damaged, or built from another graph, another
    format / engine / preprocessing version or other parameters (the message names what differs)."""
