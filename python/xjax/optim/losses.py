"""xjax.optim.losses (optax.losses): per-example losses."""
from xjax._src.optim.losses import (huber_loss, l2_loss, sigmoid_binary_cross_entropy,  # noqa: F401
                                    softmax_cross_entropy, softmax_cross_entropy_with_integer_labels,
                                    squared_error)
