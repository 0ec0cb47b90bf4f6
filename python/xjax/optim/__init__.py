"""xjax.optim: gradient transformations with optax's API (`from xjax import optim` where code has `import optax`).

An optimizer is a GradientTransformation(init, update); its state is a pytree, so it passes
through jit. Everything computes with xjax.numpy, in the C++ core.
"""
from xjax._src.optim.alias import adafactor, adagrad, adam, adamw, lamb, lion, rmsprop, sgd  # noqa: F401
from xjax._src.optim.base import (EmptyState, GradientTransformation, GradientTransformationExtraArgs,  # noqa: F401
                                  OptState, Params, Schedule, ScalarOrSchedule, Updates, chain, identity,
                                  init_empty_state, set_to_zero, stateless, stateless_with_tree_map,
                                  with_extra_args_support)
from xjax._src.optim.factorized import FactoredState, scale_by_factored_rms  # noqa: F401
from xjax._src.optim.inject import (InjectHyperparamsState, InjectStatefulHyperparamsState,  # noqa: F401
                                    WrappedSchedule, inject_hyperparams, inject_stateful_hyperparams)
from xjax._src.optim.losses import (huber_loss, l2_loss, sigmoid_binary_cross_entropy,  # noqa: F401
                                    softmax_cross_entropy, softmax_cross_entropy_with_integer_labels,
                                    squared_error)
from xjax._src.optim.schedules import (constant_schedule, cosine_decay_schedule, exponential_decay,  # noqa: F401
                                       join_schedules, linear_schedule, piecewise_constant_schedule,
                                       polynomial_schedule, warmup_cosine_decay_schedule,
                                       warmup_exponential_decay_schedule)
from xjax._src.optim.transforms import (AddDecayedWeightsState, ClipByGlobalNormState, ClipState,  # noqa: F401
                                        EmaState, ScaleByAdamState, ScaleByLionState, ScaleByRmsState,
                                        ScaleByRmsWithCountState, ScaleByRssState, ScaleByRStdDevState,
                                        ScaleByRStdDevWithCountState, ScaleByScheduleState, ScaleState, TraceState,
                                        add_decayed_weights, clip, clip_by_block_rms, clip_by_global_norm, ema,
                                        scale, scale_by_adam, scale_by_learning_rate, scale_by_lion,
                                        scale_by_param_block_rms, scale_by_rms, scale_by_rss, scale_by_schedule,
                                        scale_by_sign, scale_by_stddev, scale_by_trust_ratio, trace)
from xjax._src.optim.tree_math import global_norm, safe_increment, safe_norm, safe_root_mean_squares  # noqa: F401
from xjax._src.optim.update import apply_updates  # noqa: F401
from xjax._src.optim.wrappers import (ApplyIfFiniteState, MaskedNode, MaskedState,  # noqa: F401
                                      MultiTransformState, PartitionState, apply_if_finite, masked,
                                      multi_transform, partition)
from xjax.optim import losses, schedules  # noqa: F401
