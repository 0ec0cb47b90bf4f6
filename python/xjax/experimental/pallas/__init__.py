"""jax.experimental.pallas: Pallas (hand-written GPU and TPU kernels) is not implemented in xjax; the package
exists so that libraries that import its modules unconditionally (Keras) import, and each of its names
raises NotImplementedError."""
from xjax._src.unimplemented import missing_attributes

__getattr__ = missing_attributes(__name__, "xjax has no Pallas kernel language")
