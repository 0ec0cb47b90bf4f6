"""xjax.scipy.cluster.vq: vq, as jax.scipy.cluster.vq."""
from xjax._src.scipy.cluster_vq import vq as vq  # noqa: F401
