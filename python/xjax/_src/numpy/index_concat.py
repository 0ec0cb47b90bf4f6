"""jnp.r_ and jnp.c_: concatenation of slices, scalars and arrays by indexing, with NumPy's string
directives ("axis,ndmin,trans1d", "r", "c") and slices as ranges (a complex step `n * 1j` asks for
n points of linspace, end included)."""
from xjax._src.numpy import creation, manipulation
from xjax._src.numpy.extras import _grid_axis


def _parse_directive(directive, params):
    """[axis, ndmin, trans1d, matrix] from a string directive, defaults from params."""
    params = list(params)
    if directive == "r":
        params[3] = 0
    elif directive == "c":
        params[3] = 1
    else:
        vec = directive.split(",")
        # Past three numbers the rest is ignored, as NumPy does.
        vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[3]]
        try:
            params = [int(v) for v in vec]
        except ValueError as err:
            raise ValueError(f"could not understand directive {directive!r}") from err
    return params


def _upgrade(item, ndmin, trans1d):
    """item as an array of at least ndmin dimensions, its own axes placed as trans1d says."""
    if isinstance(item, slice):
        obj, item_ndim = _grid_axis(item), 0
    elif isinstance(item, str):
        raise ValueError("string directive must be placed at the beginning")
    else:
        obj = creation.array(item, copy=False)
        item_ndim = obj.ndim
    obj = creation.array(obj, copy=False, ndmin=ndmin)
    if trans1d != -1 and ndmin - item_ndim > 0:
        # NumPy's rule: rotate the axes left (the count taken modulo ndmin).
        shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
        axes = tuple(range(ndmin))
        obj = manipulation.transpose(obj, axes[shifts:] + axes[:shifts])
    return obj


class _AxisConcat:
    """Concatenates its index's items along `axis`, each made at least `ndmin`-dimensional."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            params = _parse_directive(items[0], params)
            items = items[1:]
        axis, ndmin, trans1d, matrix = params
        res = manipulation.concatenate([_upgrade(item, ndmin, trans1d) for item in items], axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = manipulation.expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0

    def __repr__(self):
        return f"jnp.{self.name}"


r_ = _AxisConcat(axis=0, ndmin=1, trans1d=-1, name="r_")
r_.__doc__ = "Concatenates slices, scalars and arrays along the first axis (numpy.r_)."
c_ = _AxisConcat(axis=-1, ndmin=2, trans1d=0, name="c_")
c_.__doc__ = "Concatenates slices, scalars and arrays along the last axis, as columns (numpy.c_)."
