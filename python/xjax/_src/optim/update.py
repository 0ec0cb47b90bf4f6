"""apply_updates: params + updates, leaf by leaf, keeping each parameter's dtype."""
from xjax._src import tree_util
import xjax.numpy as jnp


def apply_updates(params, updates):
    """params + updates for every leaf, cast back to the parameter's dtype (None parameters stay None)."""
    return tree_util.tree_map(
        lambda p, u: None if p is None else jnp.asarray(p + u).astype(jnp.asarray(p).dtype),
        params, updates, is_leaf=lambda x: x is None)
