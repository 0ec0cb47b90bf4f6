"""Learning-rate schedules: functions of the step count (an int or an int32 array) returning a value.

They are written in xjax.numpy, so they run eagerly on Python ints and inside jit on traced counts.
"""
import logging

import xjax.numpy as jnp

logger = logging.getLogger("xjax.optim")


def constant_schedule(value):
    """Always `value`."""
    return lambda count: value


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0):
    """From init_value to end_value as (1 - t)**power over transition_steps steps after transition_begin."""
    if transition_steps <= 0:
        logger.info("A polynomial schedule with non-positive transition_steps is the constant init_value.")
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)

    def schedule(count):
        count = jnp.clip(count - transition_begin, 0, transition_steps)
        frac = 1 - count / transition_steps
        return (init_value - end_value) * frac ** power + end_value

    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """From init_value to end_value linearly over transition_steps steps after transition_begin."""
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """init_value, multiplied by scale once the count passes each boundary of {boundary: scale}."""
    if boundaries_and_scales is not None and not all(s >= 0.0 for s in boundaries_and_scales.values()):
        raise ValueError("`piecewise_constant_schedule` expects non-negative scale factors")

    def schedule(count):
        v = init_value
        for threshold, scale in sorted((boundaries_and_scales or {}).items()):
            before = jnp.maximum(0.0, jnp.sign(threshold - count))  # 1 before the boundary, 0 from it on
            v = v * before + (1 - before) * scale * v
        return v

    return schedule


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0, staircase=False,
                      end_value=None):
    """init_value * decay_rate**((count - transition_begin) / transition_steps), optionally floored and bounded."""
    if transition_steps <= 0 or decay_rate == 0:
        logger.info("An exponential schedule with non-positive transition_steps or zero decay_rate is the "
                    "constant init_value.")
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)
    bound = jnp.maximum if decay_rate < 1.0 else jnp.minimum

    def schedule(count):
        steps = count - transition_begin
        p = steps / transition_steps
        if staircase:
            p = jnp.floor(p)
        value = jnp.where(steps <= 0, init_value, init_value * jnp.power(decay_rate, p))
        return value if end_value is None else bound(value, end_value)

    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t)))**exponent + alpha), t = min(count / decay_steps, 1)."""
    if not decay_steps > 0:
        raise ValueError(f"The cosine_decay_schedule requires positive decay_steps, got decay_steps={decay_steps!r}.")
    steps = float(decay_steps) if isinstance(decay_steps, int) else decay_steps

    def schedule(count):
        count = float(count) if isinstance(count, int) else count
        count = jnp.minimum(count, steps)
        cosine = 0.5 * (1 + jnp.cos(jnp.pi * count / steps))
        return init_value * ((1 - alpha) * cosine ** exponent + alpha)

    return schedule


def join_schedules(schedules, boundaries):
    """schedules[0] until boundaries[0], then schedules[1] counted from that boundary, and so on."""
    def schedule(step):
        out = schedules[0](step)
        for boundary, s in zip(boundaries, schedules[1:]):
            out = jnp.where(step < boundary, out, s(step - boundary))
        return out

    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps, end_value=0.0, exponent=1.0):
    """Linear warm-up from init_value to peak_value, then cosine decay to end_value at step decay_steps."""
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)],
                          [warmup_steps])


def warmup_exponential_decay_schedule(init_value, peak_value, warmup_steps, transition_steps, decay_rate,
                                      transition_begin=0, staircase=False, end_value=None):
    """Linear warm-up from init_value to peak_value, then exponential decay."""
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           exponential_decay(peak_value, transition_steps, decay_rate, transition_begin, staircase,
                                             end_value)], [warmup_steps])
