"""xjax.scipy.spatial (jax.scipy.spatial): the transform submodule, loaded on first use."""
import importlib


def __getattr__(name):
    if name == "transform":
        return importlib.import_module(f"{__name__}.transform")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
