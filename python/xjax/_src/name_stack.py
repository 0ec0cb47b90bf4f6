"""named_scope and named_call: names for parts of a program, as JAX's profiler and HLO dumps show.

xjax keeps the stack of names (a thread's current scope), which nothing in a result depends on.
"""
import contextlib
import functools
import threading


class _NameStack(threading.local):
    names = ()


_stack = _NameStack()


def current_name_stack():
    """The names of the enclosing scopes, outermost first, joined by '/'."""
    return "/".join(_stack.names)


@contextlib.contextmanager
def named_scope(name):
    """Names the computations inside the block (nested scopes join with '/')."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string, got {name!r}")
    prev, _stack.names = _stack.names, _stack.names + (name,)
    try:
        yield
    finally:
        _stack.names = prev


def named_call(fun, *, name=None):
    """`fun`, its computations under the name `name` (default: the function's name)."""
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)

    return named
