"""xjax.scipy.fft (jax.scipy.fft): discrete cosine transforms. xjax has no FFT yet, so each raises
NotImplementedError naming itself."""


def _missing(name):
    def transform(x, *args, **kwargs):
        raise NotImplementedError(f"jax.scipy.fft.{name}: xjax has no FFT yet")

    transform.__name__ = name
    return transform


dct, dctn, idct, idctn = (_missing(n) for n in ("dct", "dctn", "idct", "idctn"))
