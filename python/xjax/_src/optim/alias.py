"""The optimizers under optax's names, each a chain of the transformations in transforms.py.

learning_rate may be a number or a schedule (a function of the step count).
"""
from xjax._src.optim import base, transforms
from xjax._src.optim.base import chain
from xjax._src.optim.factorized import scale_by_factored_rms
import xjax.numpy as jnp


def sgd(learning_rate, momentum=None, nesterov=False, accumulator_dtype=None):
    """Stochastic gradient descent, with (Nesterov) momentum when momentum is given."""
    if momentum is None:
        first = base.identity()
    else:
        first = transforms.trace(decay=momentum, nesterov=nesterov, accumulator_dtype=accumulator_dtype)
    return chain(first, transforms.scale_by_learning_rate(learning_rate))


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *, nesterov=False):
    """Adam (Kingma and Ba, 2014); nesterov=True gives NAdam."""
    return chain(transforms.scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                                          nesterov=nesterov),
                 transforms.scale_by_learning_rate(learning_rate))


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, weight_decay=1e-4, mask=None, *,
          nesterov=False):
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019)."""
    return chain(transforms.scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                                          nesterov=nesterov),
                 transforms.add_decayed_weights(weight_decay, mask),
                 transforms.scale_by_learning_rate(learning_rate))


def rmsprop(learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True, centered=False, momentum=None,
            nesterov=False, bias_correction=False):
    """RMSProp (centered: divides by the standard deviation instead of the root mean square)."""
    scaling = transforms.scale_by_stddev if centered else transforms.scale_by_rms
    return chain(scaling(decay=decay, eps=eps, initial_scale=initial_scale, eps_in_sqrt=eps_in_sqrt,
                         bias_correction=bias_correction),
                 transforms.scale_by_learning_rate(learning_rate),
                 transforms.trace(decay=momentum, nesterov=nesterov) if momentum is not None else base.identity())


def adagrad(learning_rate, initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad: steps scaled by the inverse root of the sum of past squared gradients."""
    return chain(transforms.scale_by_rss(initial_accumulator_value=initial_accumulator_value, eps=eps),
                 transforms.scale_by_learning_rate(learning_rate))


def adafactor(learning_rate=None, min_dim_size_to_factor=128, decay_rate=0.8, decay_offset=0,
              multiply_by_parameter_scale=True, clipping_threshold=1.0, momentum=None, dtype_momentum=jnp.float32,
              weight_decay_rate=None, eps=1e-30, factored=True, weight_decay_mask=None):
    """Adafactor (Shazeer and Stern, 2018): factored second moments, update clipping, relative step sizes."""
    tx = [scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor, eps)]
    if clipping_threshold is not None:
        tx.append(transforms.clip_by_block_rms(clipping_threshold))
    if learning_rate is not None:
        tx.append(transforms.scale_by_learning_rate(learning_rate, flip_sign=False))
    if multiply_by_parameter_scale:
        tx.append(transforms.scale_by_param_block_rms())
    if momentum is not None:
        tx.append(transforms.ema(momentum, debias=False, accumulator_dtype=dtype_momentum))
    if weight_decay_rate is not None:
        tx.append(transforms.add_decayed_weights(weight_decay_rate, mask=weight_decay_mask))
    tx.append(transforms.scale(-1))
    return chain(*tx)


def lamb(learning_rate, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0, weight_decay=0.0, mask=None):
    """LAMB (You et al., 2019): Adam with weight decay, scaled per parameter by the trust ratio."""
    return chain(transforms.scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
                 transforms.add_decayed_weights(weight_decay=weight_decay, mask=mask),
                 transforms.scale_by_trust_ratio(),
                 transforms.scale_by_learning_rate(learning_rate))


def lion(learning_rate, b1=0.9, b2=0.99, mu_dtype=None, weight_decay=1e-3, mask=None):
    """Lion (Chen et al., 2023): the sign of interpolated momentum, with decoupled weight decay."""
    return chain(transforms.scale_by_lion(b1=b1, b2=b2, mu_dtype=mu_dtype),
                 transforms.add_decayed_weights(weight_decay, mask),
                 transforms.scale_by_learning_rate(learning_rate))
