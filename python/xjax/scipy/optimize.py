"""xjax.scipy.optimize (jax.scipy.optimize): minimize is not implemented in xjax yet."""


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    raise NotImplementedError("jax.scipy.optimize.minimize is not implemented in xjax yet")
