"""xjax.extend.core.primitives (jax.extend.core.primitives): xjax's primitives by JAX's names, for
libraries that interpret jaxprs equation by equation."""
import importlib as _importlib
import pkgutil as _pkgutil

from xjax._src import core as _core
from xjax._src import lax as _lax


def _collect():
    """Every `*_p` Primitive defined in xjax's lax modules and the other _src modules that hold
    primitives of JAX's list."""
    found = {}
    modules = [_importlib.import_module(f"xjax._src.lax.{m.name}") for m in _pkgutil.iter_modules(_lax.__path__)]
    modules += [_importlib.import_module(f"xjax._src.{m}") for m in
                ("jit", "custom_calls", "custom_batching", "call_primitives", "checkpoint", "remat", "debugging",
                 "random.prng", "random.threefry")]
    for mod in modules:
        for name, value in vars(mod).items():
            if name.endswith("_p") and not name.startswith("_") and isinstance(value, _core.Primitive):
                found.setdefault(name, value)
    return found


globals().update(_collect())
del _collect
