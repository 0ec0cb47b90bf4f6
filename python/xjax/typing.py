"""xjax.typing (jax.typing): annotations for functions that take arrays and dtypes."""
import typing as _typing

import numpy as _np

from xjax._src.array import Array as _Array


@_typing.runtime_checkable
class _SupportsDType(_typing.Protocol):
    @property
    def dtype(self, /) -> _np.dtype: ...


# What array-taking functions accept: xjax arrays, NumPy arrays and scalars, Python scalars.
ArrayLike = _typing.Union[_Array, _np.ndarray, _np.bool_, _np.number, bool, int, float, complex]
# What dtype arguments accept: names, scalar types, NumPy dtypes, objects with a dtype.
DTypeLike = _typing.Union[str, type, _np.dtype, _SupportsDType]
