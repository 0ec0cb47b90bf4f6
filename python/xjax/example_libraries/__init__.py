"""xjax.example_libraries: stax and optimizers as jax.example_libraries ships them.

    from xjax.example_libraries import stax, optimizers
"""
