"""The primitives, grouped by family; xjax.lax re-exports the public names."""
from xjax._src.lax.contraction import *  # noqa: F401,F403
from xjax._src.lax.elementwise import *  # noqa: F401,F403
from xjax._src.lax.elementwise import PRIMITIVES as _ELEMENTWISE
from xjax._src.lax.indexing import *  # noqa: F401,F403
from xjax._src.lax.layout import *  # noqa: F401,F403
from xjax._src.lax.reduction import *  # noqa: F401,F403
from xjax._src.lax.sorting import *  # noqa: F401,F403

copy_p = _ELEMENTWISE["copy"]
