"""xjax.optim: gradient transformations with optax's API (implementation)."""
