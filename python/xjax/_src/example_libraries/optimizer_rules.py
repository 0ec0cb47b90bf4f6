"""The optimizers of jax.example_libraries.optimizers, each written for one array and lifted to
pytrees by the `optimizer` decorator: sgd, momentum, nesterov, adagrad, rmsprop,
rmsprop_momentum, adam, adamax, sm3. `step_size` is a number or a schedule step -> size."""
import functools

import xjax.numpy as jnp
from xjax._src.example_libraries.optimizer_schedules import make_schedule
from xjax._src.example_libraries.optimizer_tree import Optimizer, optimizer


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size, mass):
    """SGD with momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, _first


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum on the scaled gradient g / sqrt(sum of g^2)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a <- gamma * a + (1 - gamma) * g^2; x <- x - step_size(i) * g / sqrt(a + eps)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate in a momentum buffer that is subtracted from x."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


def _bias_correction(beta, dtype, i):
    """1 - beta^(i + 1), the power taken in the moments' dtype (i may be traced)."""
    return 1 - jnp.asarray(beta, dtype) ** (i + 1)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba): bias-corrected first and second moment estimates."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / _bias_correction(b1, m.dtype, i)
        vhat = v / _bias_correction(b2, m.dtype, i)
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the second moment replaced by an exponentially weighted infinity norm."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / _bias_correction(b1, m.dtype, i)) * m / (u + eps)
        return x, m, u

    return init, update, _first


def _other_axes(ndim, axis):
    return tuple(a for a in range(ndim) if a != axis)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): one accumulator vector per axis instead of one per element; the
    per-element accumulator is the minimum over the axes' vectors plus g^2."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = jnp.reshape(g, x.shape)  # a 0-d parameter is kept as shape (1,)
        vs = [jnp.expand_dims(v, _other_axes(x.ndim, axis)) for axis, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(_other_axes(x.ndim, axis)) for axis in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        # len(x_shape) is known even when the shape's entries were traced (the state went through jit).
        return jnp.reshape(x, ()) if len(x_shape) == 0 else x

    return init, update, get_params
