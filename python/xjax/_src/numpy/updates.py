"""The .at[] property: functional index updates (set, add, multiply, min, max, ...) lowered to scatter."""
from xjax._src import core, lax
from xjax._src.lax.indexing import GatherScatterMode
from xjax._src.numpy import util
from xjax._src.lax.sharding_ops import reshard_p
from xjax._src.lax.sharding_rules_indexing import slice_sharding
from xjax._src.numpy.indexing import _basic, _gather, _gather_dnums, _is_basic, _normalize, _plan, _scatter_dnums
from xjax._src.numpy.ufuncs import negative, power, true_divide


def _scatter(x, idx, values, kind, mode=None, indices_are_sorted=False, unique_indices=False):
    """x with values combined at x[idx]; kind in set/add/mul/min/max."""
    entries = _normalize(idx, x.aval.shape)
    plan = _plan(x, entries)
    dt = x.aval.dtype
    u = util.convert(values, dt, x.aval.weak_type)
    if plan.empty:
        return x
    window = None  # (the updates typed as the window they write, as JAX's)
    if plan.indices is not None and plan.final_shape == plan.gather_shape:
        window = slice_sharding(getattr(x, "traced_aval", None) or x.aval, core.get_aval(plan.indices),
                                _gather_dnums(plan))
    u = util.broadcast_to_shape(u, plan.final_shape, window)
    if window is not None and not isinstance(u, core.Tracer):  # eagerly: placed so over x's mesh
        u = reshard_p.bind(u, dst_sharding=window, concrete_mesh=x.sharding.mesh)
    if plan.final_shape != plan.gather_shape:
        u = lax.reshape(u, plan.gather_shape)
    if plan.rev_dims:
        u = lax.rev(u, plan.rev_dims)
    if plan.indices is None:  # the whole array is the window
        if kind == "set":
            return u if u.aval.weak_type == x.aval.weak_type else lax.elementwise._convert(u, dt, x.aval.weak_type)
        return {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}[kind](x, u)
    m = GatherScatterMode.from_any(mode)
    fn = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min,
          "max": lax.scatter_max}[kind]
    return fn(x, plan.indices, u, _scatter_dnums(plan), indices_are_sorted=indices_are_sorted or plan.unique,
              unique_indices=unique_indices or plan.unique, mode=m)


class _IndexUpdateHelper:
    """The `.at` property: `x.at[idx]` gives the update reference of one index."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: functional versions of x[idx] = y, x[idx] += y, ..."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None, out_sharding=None):
        """x[idx] (mode='fill' fills out-of-bounds entries with fill_value)."""
        x = self.array
        entries = _normalize(self.index, x.aval.shape)
        if mode is None and _is_basic(entries):
            return _basic(x, entries)
        return _gather(x, entries, mode, fill_value, indices_are_sorted, unique_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = values (out-of-bounds updates dropped)."""
        return _scatter(self.array, self.index, values, "set", mode, indices_are_sorted, unique_indices)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] += values (repeated indices accumulate)."""
        return _scatter(self.array, self.index, values, "add", mode, indices_are_sorted, unique_indices)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] -= values."""
        v = util.convert(values, self.array.aval.dtype)
        return _scatter(self.array, self.index, negative(v), "add", mode, indices_are_sorted, unique_indices)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] *= values (repeated indices accumulate)."""
        return _scatter(self.array, self.index, values, "mul", mode, indices_are_sorted, unique_indices)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] /= values (integer arrays become floating, as jnp.divide does)."""
        x = self.array
        xf = util.to_inexact(x)
        denom = util.full(xf.aval.shape, 1, xf.aval.dtype)
        denom = _scatter(denom, self.index, util.convert(values, xf.aval.dtype), "mul", mode, indices_are_sorted,
                         unique_indices)
        return true_divide(xf, denom)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] **= values."""
        cur = self.get(mode=mode)
        return self.set(power(cur, values), indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = minimum(x[idx], values)."""
        return _scatter(self.array, self.index, values, "min", mode, indices_are_sorted, unique_indices)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = maximum(x[idx], values)."""
        return _scatter(self.array, self.index, values, "max", mode, indices_are_sorted, unique_indices)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] = func(x[idx])."""
        cur = self.get(mode=mode)
        return self.set(func(cur), indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
