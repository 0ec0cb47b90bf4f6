"""xjax.export: jitted functions as .xjx files that Python (deserialize, load) or a C++ program
(include/xjax/xjax.h: xjax::load) can run without the function's source.

    exp = xjax.export.export(jax.jit(f))(x)              # Exported: in_tree, in_avals, call, ...
    blob = exp.serialize()                               # bytes of an .xjx file
    xjax.export.deserialize(blob).call(x)                # the same bits as jax.jit(f)(x)

Several functions, and several signatures of one, go into one file with an Exporter; the arrays
they close over (weights) are stored once. The format is documented in docs/format.md.
"""
from xjax._src.export import builtin_nodes  # noqa: F401 - xjax.optim's states, stored under fixed names
from xjax._src.export.exported import Exported, export  # noqa: F401
from xjax._src.export.exporter import (Exporter, ExportedModule, deserialize, deserialize_module,  # noqa: F401
                                       exporter, load)
from xjax._src.export.pytree_spec import (register_namedtuple_serialization,  # noqa: F401
                                          register_pytree_node_serialization, text_to_treedef, treedef_to_text)
from xjax._core import XJX_FORMAT_VERSION as format_version, XJX_OPSET_VERSION as opset_version  # noqa: F401
from xjax._src.shape_poly import is_symbolic_dim, symbolic_shape  # noqa: F401
