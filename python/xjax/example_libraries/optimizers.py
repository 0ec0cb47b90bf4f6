"""xjax.example_libraries.optimizers: jax.example_libraries.optimizers' Optimizer triples and schedules.

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params); state = opt_update(step, grads, state); params = get_params(state)
"""
from xjax._src.example_libraries.optimizer_rules import (adagrad, adam, adamax, momentum, nesterov,  # noqa: F401
                                                         rmsprop, rmsprop_momentum, sgd, sm3)
from xjax._src.example_libraries.optimizer_schedules import (constant, exponential_decay,  # noqa: F401
                                                             inverse_time_decay, make_schedule,
                                                             piecewise_constant, polynomial_decay)
from xjax._src.example_libraries.optimizer_tree import (JoinPoint, Optimizer, OptimizerState, Schedule,  # noqa: F401
                                                        Step, clip_grads, l2_norm, optimizer,
                                                        pack_optimizer_state, unpack_optimizer_state)
