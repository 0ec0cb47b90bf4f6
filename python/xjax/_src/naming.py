"""named_scope and named_call: names for parts of a program. In JAX they only label the compiled
program's operations (for profilers); xjax keeps no such labels, so they change nothing computed."""
import contextlib
import functools


@contextlib.contextmanager
def named_scope(name):
    """A context manager naming the operations traced inside it (a label only)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def named_call(fun, *, name=None):
    """`fun` with its operations named `name` (default: fun's name); it computes what fun computes."""
    label = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(label):
            return fun(*args, **kwargs)

    return named
