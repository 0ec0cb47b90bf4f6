"""The Python array API metadata of xjax.numpy (a 2024.12 namespace, as jax.numpy is)."""
import numpy as np

from xjax._src import dtypes
from xjax._src.array import CPU_DEVICE

__array_api_version__ = "2024.12"


def array_namespace(api_version=None):
    """xjax.numpy, the namespace `Array.__array_namespace__` returns (only api_version 2024.12)."""
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"api_version={api_version!r} is not available; available versions are: "
                         f"{[__array_api_version__]}")
    import xjax.numpy  # lazy: the public namespace, which imports this module

    return xjax.numpy


def __array_namespace_info__():
    """The namespace's inspection object (capabilities, devices, dtypes)."""
    return ArrayNamespaceInfo()


_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
    "numeric": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
                "complex64", "complex128"),
}
_X64_ONLY = ("int64", "uint64", "float64", "complex128")


class ArrayNamespaceInfo:
    """What the array API's `__array_namespace_info__()` reports for xjax.numpy."""

    _capabilities = {
        "boolean indexing": False,  # data-dependent output shapes cannot be traced
        "data-dependent shapes": False,
        "max dimensions": 64,
    }

    def capabilities(self):
        return dict(self._capabilities)

    def default_device(self):
        # None: arrays are not committed to a device (as in JAX).
        return None

    def devices(self):
        return [None, CPU_DEVICE]

    def default_dtypes(self, *, device=None):
        return {"real floating": dtypes.default_float_dtype(),
                "complex floating": np.dtype("complex128" if dtypes.x64_enabled() else "complex64"),
                "integral": dtypes.default_int_dtype(),
                "indexing": dtypes.default_int_dtype()}

    def dtypes(self, *, device=None, kind=None):
        """The array API dtypes of a kind (a name or a tuple of names; all numeric and bool if None)."""
        kinds = ("numeric", "bool") if kind is None else kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"Unrecognized kind: {k!r}")
            for name in _KINDS[k]:
                if name not in _X64_ONLY or dtypes.x64_enabled():
                    out[name] = np.dtype(name)
        return out
