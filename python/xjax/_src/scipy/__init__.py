"""jax.scipy's implementation: special functions and statistical distributions in lax primitives."""
