"""jax.image: resizing and scale-and-translate resampling.

Resampling along one dimension is a matrix product: each output sample is a weighted sum of the
input samples near its preimage, the weights given by a kernel (triangle, Keys cubic, Lanczos,
area) of the distance, stretched by the scale when shrinking (antialiasing) and normalised to sum
to 1. The weight matrices are built from xjax arrays (scale and translation may be traced) and
contracted with the image one resized dimension at a time.
"""
import enum
import functools
import math

import numpy as np

from xjax._src import core, dtypes
from xjax._src.jit import jit
import xjax.numpy as jnp


class ResizeMethod(enum.Enum):
    """How samples between pixels are computed."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        for names, method in _NAMES:
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"')


_NAMES = [(("nearest",), ResizeMethod.NEAREST), (("linear", "bilinear", "trilinear", "triangle"), ResizeMethod.LINEAR),
          (("lanczos3",), ResizeMethod.LANCZOS3), (("lanczos5",), ResizeMethod.LANCZOS5),
          (("cubic", "bicubic", "tricubic"), ResizeMethod.CUBIC),
          (("cubic-pytorch", "bicubic-pytorch"), ResizeMethod.CUBIC_PYTORCH), (("area",), ResizeMethod.AREA)]


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _cubic(a):
    """The cubic convolution kernel with parameter a (Keys: -0.5; OpenCV and PyTorch: -0.75)."""
    def kernel(x):
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return jnp.where(x >= 2, 0.0, jnp.where(x >= 1, far, near))

    return kernel


def _lanczos(radius):
    def kernel(x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        # sinc(x) sinc(x / radius), whose limit at 0 is 1
        out = jnp.where(x > 1e-3, y / jnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return jnp.where(x > radius, 0.0, out)

    return kernel


_AREA = "area"
# method -> (kernel radius in input samples, kernel)
_KERNELS = {ResizeMethod.LINEAR: (1, _triangle), ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
            ResizeMethod.LANCZOS5: (5, _lanczos(5.0)), ResizeMethod.CUBIC: (2, _cubic(-0.5)),
            ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)), ResizeMethod.AREA: (1, _AREA)}


def _weights(n_in, n_out, scale, translation, kernel, antialias, edge_padding, radius):
    """The (n_in, n_out) matrix whose column j holds the weights of output sample j."""
    dtype = jnp.result_type(scale, translation)
    inv = 1.0 / scale
    stretch = jnp.maximum(inv, 1.0) if antialias else 1.0  # shrinking widens the kernel: a low-pass filter
    # Pixel centres are at i + 0.5; `where` is the preimage of each output centre, less 0.5.
    where = (jnp.arange(n_out, dtype=dtype) + 0.5) * inv - translation * inv - 0.5
    pad = 0
    if edge_padding:
        value = core.to_concrete_value(scale)
        if value is None and antialias:
            raise core.ConcretizationError("Antialiasing with edge padding requires a static scale.")
        pad = math.ceil(radius * max(1.0 / float(value), 1.0)) if antialias else radius
    taps = jnp.arange(-pad, n_in + pad, dtype=dtype)
    if kernel is _AREA:  # the overlap of output cell [left, left + inv) with input cell [i, i + 1)
        left = jnp.arange(n_out, dtype=dtype) * inv - translation * inv
        w = jnp.maximum(0.0, jnp.minimum((left + inv)[None, :], (taps + 1.0)[:, None])
                        - jnp.maximum(left[None, :], taps[:, None]))
    else:
        w = kernel(jnp.abs(where[None, :] - taps[:, None]) / stretch)
    if edge_padding:  # taps beyond the edges repeat the edge samples
        rows = jnp.clip(taps.astype(jnp.int32), 0, n_in - 1)
        w = jnp.zeros((n_in, n_out), dtype).at[rows].add(w)
    total = jnp.sum(w, axis=0, keepdims=True)
    w = jnp.where(jnp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps),
                  w / jnp.where(total != 0, total, 1), 0)
    if not edge_padding:  # outputs whose preimage lies outside the input get nothing
        inside = (where >= -0.5) & (where <= n_in - 0.5)
        w = jnp.where(inside[None, :], w, 0)
    return w


def _resample(x, shape, dims, scales, translations, kernel, antialias, precision, edge_padding, radius):
    for d, s, t in zip(dims, scales, translations):
        d = d % x.ndim
        w = _weights(x.shape[d], shape[d], s, t, kernel, antialias, edge_padding, radius).astype(x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, w, axes=([d], [0]), precision=precision), -1, d)
    return x


def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_shape(image, shape):
    if len(shape) != image.ndim:
        raise ValueError(f"shape must have length equal to the number of dimensions of x;  {shape} vs {image.shape}")


def _inexact(x):
    x = jnp.asarray(x)
    return x if dtypes.issubdtype(x.dtype, np.inexact) else x.astype(dtypes.to_inexact_dtype(x.dtype))


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True, precision=None):
    """The image resampled to `shape`: input location x goes to x * scale + translation along each of
    `spatial_dims` (pixel centres at i + 0.5); outputs whose preimage is outside the input are 0."""
    shape = tuple(int(d) for d in shape)
    _check_shape(image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for scale_and_translate.")
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    image = _inexact(image)
    scale, translation = _inexact(scale), _inexact(translation)
    dtype = jnp.result_type(scale, translation)
    scale, translation = scale.astype(dtype), translation.astype(dtype)
    n = len(spatial_dims)
    return _resample(image, shape, spatial_dims, [scale[i] for i in range(n)], [translation[i] for i in range(n)],
                     kernel, antialias, precision, edge_padding, radius)


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m != n:  # output j samples input floor((j + 0.5) m / n), computed in float32 as JAX does
            src = np.floor(((np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m)) / np.float32(n))
            x = jnp.take(x, jnp.asarray(src.astype(np.int32)), axis=d)
    return x


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
    _check_shape(image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scales, [0.0] * len(dims), kernel, antialias, precision,
                     method is ResizeMethod.CUBIC_PYTORCH and not antialias, radius)


def resize(image, shape, method, antialias=True, precision=None):
    """The image resized to `shape` (every dimension, batch and channels included) by `method`:
    'nearest', 'linear', 'cubic', 'cubic-pytorch', 'lanczos3', 'lanczos5', 'area' (or a ResizeMethod).
    antialias filters when shrinking. Non-nearest methods give a floating result."""
    return _resize(image, tuple(int(d) for d in shape), method, antialias, precision)
