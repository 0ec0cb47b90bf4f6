"""optax's common losses, elementwise or per example (no reduction over the batch, as in optax)."""
import numpy as np

from xjax._src.nn.activations import log_sigmoid
from xjax._src.nn.normalize import log_softmax, logsumexp
from xjax._src.numpy import util
import xjax.numpy as jnp


def _require(name, x, kind, what):
    x = jnp.asarray(x)
    if not np.issubdtype(x.dtype, kind) and not (kind is np.floating and x.dtype == jnp.bfloat16):
        raise TypeError(f"{name}: expected `{what}` to have a dtype that is a subdtype of {kind}, got {x.dtype} "
                        "instead")
    return x


def softmax_cross_entropy(logits, labels, axis=-1, where=None):
    """-sum(labels * log_softmax(logits)) over `axis`, for labels that are probabilities."""
    logits = _require("softmax_cross_entropy", logits, np.floating, "logits")
    if where is not None and jnp.ndim(where) != logits.ndim:
        where = jnp.expand_dims(where, axis)
    return -jnp.sum(labels * log_softmax(logits, axis, where), axis, where=where)


def softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1, where=None):
    """logsumexp(logits) - logits[label] over `axis`: the cross entropy for integer class labels."""
    logits = _require("softmax_cross_entropy_with_integer_labels", logits, np.floating, "logits")
    labels = _require("softmax_cross_entropy_with_integer_labels", labels, np.integer, "labels")
    if where is not None and jnp.ndim(where) != logits.ndim:
        where = jnp.expand_dims(where, axis)
    if isinstance(axis, int):
        axis = util.canonicalize_axis(axis, logits.ndim)
    elif isinstance(axis, tuple):
        # Several class axes: move them last and merge them into one.
        class_axes = util.canonicalize_axes(axis, logits.ndim)
        batch_axes = tuple(a for a in range(logits.ndim) if a not in class_axes)
        axis = len(batch_axes)
        logits = logits.transpose(batch_axes + class_axes)
        logits = logits.reshape(logits.shape[:axis] + (-1,))
        if where is not None:
            where = jnp.asarray(where).transpose(batch_axes + class_axes)
            where = where.reshape(where.shape[:axis] + (-1,))
    else:
        raise ValueError(f"Keyword argument 'axis' must be of type 'int' or 'tuple[int, ...]' but actual type is "
                         f"{type(axis)}.")
    label_logits = jnp.take_along_axis(logits, jnp.expand_dims(labels, axis), axis=axis).take(0, axis=axis)
    out = logsumexp(logits, axis=axis, where=where) - label_logits
    if where is not None:
        out = jnp.where(jnp.any(where, axis), out, 0.0)
    return out


def sigmoid_binary_cross_entropy(logits, labels):
    """-labels * log(sigmoid(logits)) - (1 - labels) * log(1 - sigmoid(logits)), elementwise and stable."""
    logits = _require("sigmoid_binary_cross_entropy", logits, np.floating, "logits")
    labels = jnp.asarray(labels).astype(logits.dtype)
    return -labels * log_sigmoid(logits) - (1.0 - labels) * log_sigmoid(-logits)


def squared_error(predictions, targets=None):
    """(predictions - targets)**2 elementwise (targets default to 0)."""
    predictions = _require("squared_error", predictions, np.floating, "predictions")
    if targets is not None and jnp.shape(targets) != predictions.shape:
        raise ValueError(f"squared_error: predictions and targets must have the same shape, got "
                         f"{predictions.shape} and {jnp.shape(targets)}")
    errors = predictions - targets if targets is not None else predictions
    return errors ** 2


def l2_loss(predictions, targets=None):
    """0.5 * (predictions - targets)**2 elementwise."""
    return 0.5 * squared_error(jnp.asarray(predictions), targets)


def huber_loss(predictions, targets=None, *, delta=1.0):
    """0.5 * err**2 where |err| <= delta, delta * (|err| - 0.5 * delta) beyond: quadratic near 0, linear far out."""
    predictions = _require("huber_loss", predictions, np.floating, "predictions")
    errors = predictions - targets if targets is not None else predictions
    abs_errors = jnp.abs(errors)
    quadratic = jnp.minimum(abs_errors, delta)
    return 0.5 * quadratic ** 2 + delta * (abs_errors - quadratic)
