"""Mutable array references (JAX's `jax.Ref`): not implemented in xjax yet."""
