"""jax.scipy's implementation: SciPy's API (linalg, special, stats) in lax primitives and xjax.numpy."""
