"""Multi-process runs over MPI (mpirun / srun): xjax.distributed.initialize, as jax.distributed."""
from xjax._src.distributed import DistributedError, initialize, is_initialized, shutdown  # noqa: F401
