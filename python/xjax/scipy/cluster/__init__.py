"""xjax.scipy.cluster: as jax.scipy.cluster, vector quantisation."""
from xjax.scipy.cluster import vq as vq  # noqa: F401
