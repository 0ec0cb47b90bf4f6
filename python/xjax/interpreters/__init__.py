"""xjax.interpreters (jax.interpreters): the transformations' public registration points."""
