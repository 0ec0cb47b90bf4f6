"""jax.scipy's implementation: SciPy's API in lax primitives and xjax.numpy."""
