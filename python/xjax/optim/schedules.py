"""xjax.optim.schedules (optax.schedules): step-count -> value functions, and inject_hyperparams."""
from xjax._src.optim.inject import (InjectHyperparamsState, InjectStatefulHyperparamsState,  # noqa: F401
                                    inject_hyperparams, inject_stateful_hyperparams)
from xjax._src.optim.schedules import (constant_schedule, cosine_decay_schedule, exponential_decay,  # noqa: F401
                                       join_schedules, linear_schedule, piecewise_constant_schedule,
                                       polynomial_schedule, warmup_cosine_decay_schedule,
                                       warmup_exponential_decay_schedule)
