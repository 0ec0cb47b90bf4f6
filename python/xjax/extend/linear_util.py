"""xjax.extend.linear_util (jax.extend.linear_util): JAX's wrapped functions are not part of xjax;
a library imports this module and fails by name only where it calls one of them."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"jax.extend.linear_util.{name}: xjax does not implement JAX's linear_util "
                              f"(trace with xjax.make_jaxpr instead)")
