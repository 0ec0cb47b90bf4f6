"""xjax.random: JAX's functional PRNG (threefry2x32 keys), giving JAX's numbers for the same keys."""
from xjax._src.random.keys import (PRNGKey, clone, default_prng_impl, fold_in, key, key_data,  # noqa: F401
                                   key_dtype, key_impl, split, wrap_key_data)
from xjax._src.random.samplers import (bernoulli, bits, cauchy, exponential, gumbel, laplace,  # noqa: F401
                                       logistic, lognormal, maxwell, normal, pareto, rademacher, randint,
                                       truncated_normal, uniform, weibull_min)
from xjax._src.random.gamma import beta, chisquare, dirichlet, gamma, loggamma, random_gamma_p, t  # noqa: F401
from xjax._src.random.discrete import categorical, choice, permutation, poisson  # noqa: F401
from xjax._src.random.multivariate import ball, multivariate_normal, orthogonal  # noqa: F401
from xjax._src.random.derived import (double_sided_maxwell, f, generalized_normal, geometric, rayleigh,  # noqa: F401
                                      triangular, wald)
from xjax._src.random.binomial import binomial, multinomial  # noqa: F401

from xjax._src.out_sharding import add_out_sharding as _add_out_sharding  # noqa: E402

_add_out_sharding(globals(), "jax.random", (
    "ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare", "dirichlet", "exponential", "f", "gamma",
    "generalized_normal", "geometric", "gumbel", "laplace", "loggamma", "logistic", "lognormal", "maxwell",
    "multivariate_normal", "normal", "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint",
    "rayleigh", "t", "triangular", "truncated_normal", "uniform", "wald"))
