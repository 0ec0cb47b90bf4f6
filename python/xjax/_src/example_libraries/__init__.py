"""jax.example_libraries in xjax: stax (neural-network layers as (init_fun, apply_fun) pairs)
and optimizers (Optimizer triples over pytrees), built on xjax.lax, xjax.nn and xjax.random."""
