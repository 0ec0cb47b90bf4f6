"""Step-size schedules of jax.example_libraries.optimizers: functions step -> step size. With a
Python int step they compute in Python where JAX's do; with a traced step, in xjax.numpy."""
import xjax.numpy as jnp


def constant(step_size):
    """The schedule returning `step_size` at every step."""
    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """step_size / (1 + decay_rate * i / decay_steps), with floor(i / decay_steps) when staircase."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From step_size down to final_step_size along (1 - i / decay_steps) ** power, then constant."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries, values):
    """values[k] for steps i with exactly k boundaries below i (len(values) == len(boundaries) + 1)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError(f"piecewise_constant: boundaries and values must be sequences, got shapes "
                         f"{boundaries.shape} and {values.shape}.")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError(f"piecewise_constant: boundaries length must be one shorter than values length, got "
                         f"{boundaries.shape[0]} boundaries and {values.shape[0]} values.")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule):
    """A callable is a schedule already; a scalar becomes constant(scalar)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    try:
        scalar = jnp.ndim(scalar_or_schedule) == 0 and not isinstance(scalar_or_schedule, str)
    except TypeError:
        scalar = False
    if scalar:
        return constant(scalar_or_schedule)
    raise TypeError(f"step_size must be a scalar or a schedule (a callable step -> step size), got "
                    f"{scalar_or_schedule!r} of type {type(scalar_or_schedule).__name__}.")
