"""xjax.scipy.special: SciPy's special functions, as jax.scipy.special."""
from xjax._src.scipy.special import (  # noqa: F401
    beta, betainc, betaln, digamma, entr, erf, erfc, erfinv, expit, factorial, gamma, gammainc, gammaincc, gammaln,
    gammasgn, i0, i0e, i1, i1e, kl_div, log_softmax, logit, logsumexp, multigammaln, polygamma, rel_entr, softmax,
    xlog1py, xlogy, zeta)
from xjax._src.scipy.special_expint import exp1, expi, expn  # noqa: F401
from xjax._src.scipy.special_integrals import dawsn, fresnel, sici  # noqa: F401
from xjax._src.scipy.special_misc import bernoulli, boxcox, boxcox1p, comb, owens_t, sph_harm_y, wofz  # noqa: F401
from xjax._src.scipy.special_more import bessel_jn, erfcx, hyp1f1, loggamma, poch, spence  # noqa: F401
from xjax._src.scipy.special_hyp2f1 import hyp2f1  # noqa: F401
from xjax._src.scipy.special_normal import log_ndtr, ndtr, ndtri  # noqa: F401
