"""jax.named_scope: names for the operations traced inside a block. JAX records them in its compiled
programs' metadata (profiles, HLO dumps); xjax's programs keep no names, so the scope only checks its name."""
import contextlib


@contextlib.contextmanager
def named_scope(name):
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string, got {type(name).__name__}")
    yield
