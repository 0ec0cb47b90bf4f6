"""xjax.ad_checkpoint: checkpoint (remat), its policies and checkpoint_name, under JAX's names."""
from xjax._src.checkpoint import (  # noqa: F401
    checkpoint, checkpoint_name, checkpoint_policies, everything_saveable, name_p, nothing_saveable, remat)
from xjax._src.remat import remat_p  # noqa: F401
