"""`xjax.install_as_jax()`: `import jax` (and every `jax.*` module) gives xjax's, so that libraries
written for JAX (optax, Flax, ...) run on xjax unchanged.

A finder first on `sys.meta_path` answers for `jax` and `jax.X.Y`: the top-level `jax` is a small
module of its own that forwards every attribute to `xjax` but reports the version of the JAX API
xjax implements; `jax.X.Y` is the very module object `xjax.X.Y`. Real jaxlib is never loaded
behind xjax: importing it raises an ImportError naming who asked.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types

import xjax

JAX_API_VERSION = "0.10.2"  # the JAX release whose API and recorded values xjax follows


class _JaxModule(types.ModuleType):
    """The `jax` module: xjax's attributes, JAX's version."""

    def __getattr__(self, name):
        try:
            return getattr(xjax, name)
        except AttributeError:
            pass
        if name == "version" or (not name.startswith("_") and importlib.util.find_spec("xjax." + name) is not None):
            return importlib.import_module("jax." + name)  # a submodule JAX imports with the package
        raise AttributeError(f"module 'jax' has no attribute '{name}'")

    def __dir__(self):
        return sorted(set(dir(xjax)) | set(self.__dict__))


def _importer():
    """The file of the first frame outside importlib and this module: who is importing."""
    frame = sys._getframe(1)
    while frame is not None:
        f = frame.f_code.co_filename
        if "importlib" not in f and f != __file__:
            return f"{f}:{frame.f_lineno}"
        frame = frame.f_back
    return "unknown"


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "jaxlib" or name.startswith("jaxlib."):
            raise ImportError(f"'{name}' is JAX's own runtime, which xjax replaces (xjax.install_as_jax() is in "
                              f"effect); imported from {_importer()}", name=name)
        if name != "jax" and not name.startswith("jax."):
            return None
        if name == "jax.version":  # the alias's own module: JAX's version, not xjax's
            return importlib.util.spec_from_loader(name, self)
        if name != "jax":
            target = "xjax" + name[3:]
            try:
                importlib.import_module(target)
            except ModuleNotFoundError as e:
                if e.name and (e.name == target or target.startswith(e.name + ".")):
                    raise ModuleNotFoundError(f"No module named '{name}'", name=name) from None
                raise
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        if spec.name == "jax":
            module = _JaxModule("jax", xjax.__doc__)
            module.__path__ = []  # a package: its submodules come from this finder alone
        elif spec.name == "jax.version":
            module = types.ModuleType("jax.version", "The version of the JAX API that xjax implements.")
            module._version = JAX_API_VERSION
        else:
            module = sys.modules["xjax" + spec.name[3:]]
            self._own_specs[module.__name__] = module.__spec__  # importlib sets __spec__ to the alias's next
            return module
        module.__version__ = JAX_API_VERSION
        module.__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
        return module

    def exec_module(self, module):
        if module.__name__ in self._own_specs:  # xjax's module keeps its own name and spec
            module.__spec__ = self._own_specs[module.__name__]

    def __init__(self):
        self._own_specs = {}


_FINDER = _Finder()


def install_as_jax():
    """Makes `import jax`, `import jax.numpy`, `from jax import lax` ... give xjax's modules, for every
    import from now on. Call it before anything imports jax; it fails if the real JAX is already
    imported. Calling it again does nothing."""
    if _FINDER in sys.meta_path:
        return
    loaded = [m for m in ("jax", "jaxlib") if m in sys.modules and not isinstance(sys.modules[m], _JaxModule)]
    if loaded:
        raise RuntimeError(f"xjax.install_as_jax(): {loaded[0]} is already imported; call it before anything "
                           f"imports jax")
    sys.meta_path.insert(0, _FINDER)
