"""xjax.experimental.layout (jax.experimental.layout): an array's memory layout with its sharding.

xjax arrays are always row-major in host memory; a Format records the pair as a description.
"""
from xjax.sharding import Sharding


class Format:
    """A layout (None: the default, row-major) and a sharding, as one value."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if layout is not None:
            raise NotImplementedError("jax.experimental.layout.Format: xjax has only the default (row-major) layout")
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError(f"Format: sharding must be a jax.sharding.Sharding or None, got {type(sharding).__name__}")
        self.layout, self.sharding = layout, sharding

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout!r}, sharding={self.sharding!r})"
