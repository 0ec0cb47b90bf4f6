"""xjax.Array: an immutable array whose data lives in the C++ runtime.

Arithmetic operators and methods are attached by xjax._src.numpy.array_methods, so the same
definitions serve tracers inside transformations.
"""
import abc

import numpy as np

from xjax._src import core, dtypes
from xjax._src.backends import cpu


class Device:
    """The host CPU, as a JAX device."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


CPU_DEVICE = Device()


class Array(metaclass=abc.ABCMeta):
    """An immutable, asynchronously computed n-dimensional array (tracers count as Arrays too)."""

    __slots__ = ("_value", "aval", "_npy", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, aval):
        self._value = value  # xjax._core.Array
        self.aval = aval  # core.ShapedArray
        self._npy = None  # cached read-only NumPy view

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)
    device = property(lambda self: CPU_DEVICE)
    sharding = property(lambda self: None)
    is_fully_addressable = True

    def devices(self):
        return {CPU_DEVICE}

    def _numpy(self):
        """The data as a read-only NumPy array sharing the buffer (waits for the computation)."""
        if self._npy is None:
            self._npy = cpu.to_numpy(self._value, self.aval)
        return self._npy

    def block_until_ready(self):
        """Waits until computed; raises the error of a failed computation."""
        self._value.wait()
        return self

    def is_ready(self):
        return self._value.is_ready()

    def __array__(self, dtype=None, copy=None):
        x = self._numpy()
        if copy:
            x = x.copy()
        return x if dtype is None else x.astype(dtype, copy=False)

    def __dlpack__(self, *args, **kwargs):
        return self._numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._numpy().__dlpack_device__()

    def __repr__(self):
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._numpy(), prefix=prefix, suffix=",", separator=", ", max_line_width=width)
        last_line = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last_line + len(dtype_str) + 2 > width else " "
        return f"{prefix}{body},{sep}{dtype_str})"

    def __str__(self):
        return str(self._numpy())

    def __format__(self, spec):
        x = self._numpy()
        return format(x if self.ndim else x[()], spec)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __bool__(self):
        return bool(self._numpy())

    def __int__(self):
        return int(self._numpy())

    def __float__(self):
        return float(self._numpy())

    def __complex__(self):
        return complex(self._numpy())

    def __index__(self):
        if not dtypes.is_int(self.dtype):
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index, got {self.dtype}")
        return int(self._numpy())

    def item(self, *args):
        return self._numpy().item(*args)

    def tolist(self):
        return self._numpy().tolist()

    def __setitem__(self, idx, value):
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment. JAX arrays are immutable. "
            "Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

    __hash__ = None

    def __reduce__(self):
        return (cpu.device_put, (np.asarray(self),))

    def copy(self):
        """A copy with its own buffer."""
        from xjax._src import lax

        return lax.copy_p.bind(self)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


Array.register(core.Tracer)  # isinstance(tracer, jnp.ndarray) holds, as in JAX
core.ARRAY_TYPES = (Array,)
cpu._array_type = Array
