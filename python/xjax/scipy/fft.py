"""xjax.scipy.fft (jax.scipy.fft): discrete cosine transforms (type 2, as JAX)."""
from xjax._src.scipy.fft import dct, dctn, idct, idctn  # noqa: F401
