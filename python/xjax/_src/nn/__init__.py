"""jax.nn: activations, softmax and friends, attention, initializers (implementation)."""
