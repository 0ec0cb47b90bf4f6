"""xjax.interpreters (jax.interpreters): the transformations' registration points for primitives
defined outside xjax. Each table is a view onto the rule fields of xjax's Primitive."""
from xjax.interpreters import ad, batching, mlir, partial_eval  # noqa: F401
