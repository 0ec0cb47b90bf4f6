"""stax's pooling layers MaxPool, SumPool and AvgPool: windowed max / sum over the spatial axes
(every axis but batch and features, NHWC unless `spec` names them), as lax's windowed reductions.

AvgPool divides each window's sum by the number of input elements under it, so with "SAME"
padding the edge windows average only the real elements (padding does not count)."""
import xjax.numpy as jnp
from xjax._src.example_libraries import stax_shapes as shapes
from xjax._src.lax.windowed import _reduce_window_max, _reduce_window_sum


def _non_spatial(name, spec, n):
    """The (batch, feature) axes: from `spec` (e.g. "NCHW"), else the first and the last."""
    if spec is None:
        return 0, n + 1
    if not isinstance(spec, str) or len(spec) != n + 2 or spec.count("N") != 1 or spec.count("C") != 1:
        raise ValueError(f"{name}: spec must be a string of {n + 2} characters naming N and C once (e.g. "
                         f"{'N' + 'HWD'[:n] + 'C'!r}) for a window of rank {n}, got {spec!r}.")
    return spec.index("N"), spec.index("C")


def _with_unit_axes(values, axes):
    """`values` over the spatial axes, with 1 inserted at the batch and feature axes."""
    out = list(values)
    for i in sorted(axes):
        out.insert(i, 1)
    return tuple(out)


def _window_counts(inputs, window, strides, padding, non_spatial):
    """How many real (unpadded) input elements each output window covers, broadcastable to the output."""
    shape = jnp.shape(inputs)
    spatial = tuple(d for i, d in enumerate(shape) if i not in non_spatial)
    counts = _reduce_window_sum(jnp.ones(spatial, jnp.result_type(inputs)), window, strides, padding)
    return jnp.reshape(counts, _with_unit_axes(jnp.shape(counts), non_spatial))


def _pooling(name, reduce, average=False):
    def layer(window_shape, strides=None, padding="VALID", spec=None):
        n = len(window_shape)
        window = shapes.window_tuple(name, "window_shape", window_shape, n)
        strides = (1,) * n if not strides else shapes.window_tuple(name, "strides", strides, n)
        padding = shapes.check_padding(name, padding, n, explicit=False)
        non_spatial = _non_spatial(name, spec, n)
        full_window, full_strides = _with_unit_axes(window, non_spatial), _with_unit_axes(strides, non_spatial)
        layout = spec if spec else "N" + "HWD"[:n] + "C" if n <= 3 else f"N, {n} spatial axes, C"

        def init_fun(rng, input_shape):
            input_shape = shapes.as_shape(name, input_shape)
            shapes.check_rank(name, input_shape, n + 2, layout)
            return shapes.pool_out_shape(input_shape, window, strides, padding, non_spatial), ()

        def apply_fun(params, inputs, **kwargs):
            shapes.check_rank(name, jnp.shape(inputs), n + 2, layout)
            out = reduce(inputs, full_window, full_strides, padding)
            if average:
                out = out / _window_counts(inputs, window, strides, padding, non_spatial)
            return out

        return init_fun, apply_fun

    layer.__name__ = name
    layer.__doc__ = (f"A {name} layer: (init_fun, apply_fun) pooling windows of `window_shape` over the spatial "
                     "axes with `strides` and padding 'VALID'/'SAME'/'SAME_LOWER'; `spec` (e.g. 'NCHW') places "
                     "the batch and feature axes (default: first and last).")
    return layer


MaxPool = _pooling("MaxPool", _reduce_window_max)
SumPool = _pooling("SumPool", _reduce_window_sum)
AvgPool = _pooling("AvgPool", _reduce_window_sum, average=True)
