"""TPU splash attention, a Pallas kernel: not implemented in xjax (which runs on CPUs and CUDA GPUs)."""
from xjax._src.unimplemented import missing_attributes

__getattr__ = missing_attributes(__name__, "it is a Pallas TPU kernel")
