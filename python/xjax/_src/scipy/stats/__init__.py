"""jax.scipy.stats' distributions, one module each (logpdf/pdf/cdf/... with JAX's loc/scale conventions)."""
