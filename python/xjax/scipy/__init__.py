"""xjax.scipy: SciPy's API on xjax arrays, as jax.scipy (cluster, fft, integrate, interpolate, linalg, ndimage,
optimize, signal, sparse, spatial, special, stats).

Submodules load on first use, as in JAX: `import xjax as jax; jax.scipy.special.logsumexp(x)`.
"""
import importlib

_SUBMODULES = ("cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse",
               "spatial", "special", "stats")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBMODULES))
