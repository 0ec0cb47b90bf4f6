"""WrappedFun: a function with transformations applied to its calls, as `jax.extend.linear_util`
gives it to libraries that trace Python functions through JAX's internal API.

A transformation is a function gen(f, *static_args, *args, **kwargs) that calls f (the function
wrapped so far) and may change its arguments and results; `transformation_with_aux2` also hands gen
a Store for a side result (for example a pytree structure) read after the call.
"""
import functools


class StoreException(Exception):
    pass


class Store:
    """A value set once by a transformation, during the call."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self):
        self._val = Store._EMPTY

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self):
        return self._val is not Store._EMPTY


class WrappedFun:
    """f with transformations: call_wrapped(*args, **kwargs) runs them around f."""

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "debug_info")

    def __init__(self, f, f_transformed, transforms, stores, params, debug_info):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", type(self.f).__name__)

    def wrap(self, gen, gen_static_args, out_store):
        """This function with one more transformation, outermost."""
        if out_store is None:
            inner = functools.partial(gen, self.f_transformed, *gen_static_args)
        else:
            inner = functools.partial(gen, self.f_transformed, out_store, *gen_static_args)
        return WrappedFun(self.f, inner, ((gen, gen_static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, self.debug_info)

    def call_wrapped(self, *args, **kwargs):
        for s in self.stores:
            if s is not None:
                s.reset()
        return self.f_transformed(*args, **kwargs)

    def __eq__(self, other):
        return (isinstance(other, WrappedFun) and self.f is other.f and self.transforms == other.transforms
                and self.params == other.params)

    def __hash__(self):
        return hash((id(self.f), self.transforms, self.params))

    def __repr__(self):
        return f"Wrapped function: {self.__name__} with {len(self.transforms)} transformation(s)"


def wrap_init(f, params=None, *, debug_info=None):
    """f as a WrappedFun with no transformation; params are keyword arguments given on every call."""
    params = () if params is None else tuple(sorted(params.items()))
    bound = functools.partial(f, **dict(params)) if params else f
    return WrappedFun(f, bound, (), (), params, debug_info)


def transformation2(gen):
    """A decorator: gen(f, *static, *args, **kwargs) becomes t(fun, *static) -> fun with gen applied."""

    def apply(fun, *gen_static_args):
        return fun.wrap(gen, gen_static_args, None)

    return functools.wraps(gen)(apply)


def transformation_with_aux2(gen, use_eq_store=False):
    """A decorator: gen(f, store, *static, *args, **kwargs) becomes t(fun, *static) -> (fun with gen
    applied, a thunk giving what gen stored)."""
    del use_eq_store

    def apply(fun, *gen_static_args):
        store = Store()
        return fun.wrap(gen, gen_static_args, store), lambda: store.val

    return functools.wraps(gen)(apply)


def merge_linear_aux(aux1, aux2):
    """The one of two aux thunks whose store was filled (a linear function runs one branch)."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            out2 = aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
        return True, out2
    return False, out1


def cache(call):
    """A function of (WrappedFun, *args): calls through (xjax's jit and tracing caches memoise)."""
    return call


def _generator_transformation(name):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(f"linear_util.{name}: generator-style transformations are not supported by "
                                  f"xjax; use {name}2")

    return unsupported


transformation = _generator_transformation("transformation")
transformation_with_aux = _generator_transformation("transformation_with_aux")
