"""Exported: one function for given argument types, as an .xjx file stores it; export() makes one
from a jitted function, deserialize() reads one back; both call through the C++ loader's path."""
import numpy as np

from xjax import _core
from xjax._src import core, data_leaves, dtypes, placement, platforms
from xjax._src.array import Array
from xjax._src.backends import cpu
from xjax._src.export import lowering, writing
from xjax._src.export.pytree_spec import text_to_treedef, treedef_to_text
from xjax._src.jit import JitWrapped, jit


def _spec(aval):
    return (tuple(aval.shape), aval.dtype.name, bool(aval.weak_type))


def _aval(spec):
    shape, dtype, weak = spec
    return core.ShapedArray(shape, cpu._NP_DTYPE[dtype], weak)


class Exported:
    """A function exported for one signature: `call` runs it, `serialize` gives the .xjx bytes.

    Attributes (as JAX's jax.export.Exported): fun_name, in_tree and out_tree (PyTreeDefs of
    (args, kwargs) and of the result), in_avals and out_avals (ShapedArrays of the flat leaves),
    platforms, nr_devices. The arrays the function closes over (weights) travel with it.
    """

    platforms = ("cpu",)
    nr_devices = 1

    def __init__(self, fun_name, in_tree, out_tree, in_avals, out_avals, graph, weights, loaded=None):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self._graph = graph  # _core.Graph before optimisation: inputs, then weights
        self._weights = list(weights)  # _core.Arrays, one per weight parameter
        self._loaded = loaded  # the compiled _core.LoadedFunction, made on first call
        self._gpu_programs = {}  # GpuDevice -> (its backends.cuda Program, the weights there)

    def __repr__(self):
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported({self.fun_name}: ({ins}) -> ({outs}))"

    def in_shardings_hlo(self):
        return (None,) * len(self.in_avals)

    def out_shardings_hlo(self):
        return (None,) * len(self.out_avals)

    def graph_text(self):
        """The stored graph (before optimisation), one node per line."""
        return self._graph.text()

    def _record(self, weight_index, for_file=True):
        """The function as _core.xjx_write takes it, its weights at these module indices. Only a file
        needs the signature's structures as text (which unregistered node types do not have)."""
        texts = [treedef_to_text(t, f"xjax.export of {self.fun_name}") if for_file else ""
                 for t in (self.in_tree, self.out_tree)]
        return (self.fun_name, self._graph, [_spec(a) for a in self.in_avals], [_spec(a) for a in self.out_avals],
                list(weight_index), *texts)

    def _function(self):
        if self._loaded is None:
            self._loaded = _core.xjx_compile(self._record(range(len(self._weights)), for_file=False), self._weights)
        return self._loaded

    def serialize(self, vjp_order=0):
        """The .xjx file holding this function (use xjax.export.Exporter for several)."""
        if vjp_order:
            raise NotImplementedError("xjax.export: serialize(vjp_order>0) is not supported; export the jitted "
                                      "gradient function instead")
        return writing.write_file([(self.fun_name, self)])

    def call(self, *args, **kwargs):
        """Runs the exported program on arguments of the exported types (structure, shapes, dtypes)."""
        leaves, tree = data_leaves.flatten((args, kwargs))
        if tree != self.in_tree and not _same_text(tree, self.in_tree):
            raise TypeError(f"Exported.call of {self.fun_name}: the arguments have the structure {tree}, the "
                            f"exported function takes {self.in_tree}")
        gpu = placement.gpu_for_call(leaves)
        if gpu is not None:
            args = [_operand_on_gpu(x, a, i, self.fun_name, gpu) for i, (x, a) in enumerate(zip(leaves, self.in_avals))]
            return self.out_tree.unflatten(platforms.gpu.run_exported(self, args, gpu))
        values = [_operand(x, a, i, self.fun_name) for i, (x, a) in enumerate(zip(leaves, self.in_avals))]
        outs = self._function().call(values)
        wrap = Array
        return self.out_tree.unflatten([wrap(v, a) for v, a in zip(outs, self.out_avals)])

    __call__ = call


def _same_text(a, b):
    """Whether two structures are stored alike (a custom node read back from a file is rebuilt by its
    registration, whose aux data may compare unequal to the original's)."""
    try:
        return treedef_to_text(a) == treedef_to_text(b)
    except (TypeError, ValueError):
        return False


def _operand(x, aval, i, name):
    """The _core.Array for argument i, of exactly the exported shape and dtype."""
    t = type(x)
    if t in core.ARRAY_TYPES:
        got = x.aval
    elif isinstance(x, core.Tracer):
        raise TypeError(f"Exported.call of {name}: argument {i} is a tracer; an exported function is called on "
                        "concrete arrays (outside jit, grad and vmap)")
    elif t in (bool, int, float) and not aval.shape:
        return cpu.scalar(x, aval.dtype, aval.weak_type)._value
    else:
        arr = np.asarray(x)
        got = core.ShapedArray(arr.shape, dtypes.canonicalize_dtype(arr.dtype))
        if got.shape == aval.shape and got.dtype == aval.dtype:
            return cpu.device_put(arr, aval.dtype)._value
    if got.shape != aval.shape or got.dtype != aval.dtype:
        raise ValueError(f"Exported.call of {name}: argument {i} is {got.str_short()}, the exported function takes "
                         f"{aval.str_short()}")
    return x._value


def _host_value(x):
    """The _core.Array of xjax Array x's data (a GPU array's copied to the host: an Exported keeps its
    weights there, to write them to a file or upload them to any device)."""
    return x._value if type(x) is Array else cpu.device_put(x._numpy(), x.dtype)._value


def _operand_on_gpu(x, aval, i, name, gpu):
    """Argument i as an xjax Array on GpuDevice gpu, checked as _operand checks it."""
    if not platforms.gpu.is_gpu_array(x):
        x = Array(_operand(x, aval, i, name), aval)
    elif x.aval.shape != aval.shape or x.aval.dtype != aval.dtype:
        raise ValueError(f"Exported.call of {name}: argument {i} is {x.aval.str_short()}, the exported function "
                         f"takes {aval.str_short()}")
    return platforms.gpu.to_device(x, gpu)


def export(fun_jit, *, platforms=None, **kwargs):
    """Returns a function that exports `fun_jit` for the given arguments (arrays or
    ShapeDtypeStructs, with the same structure as a call): export(f)(*args, **kwargs) -> Exported.

    A plain function is jitted first. Static arguments are given as in a call and baked in. Raises
    ValueError when the function calls back into Python (debug.print, debug.callback).
    """
    if platforms is not None and tuple(platforms) != ("cpu",):
        raise ValueError(f"xjax.export: platforms {tuple(platforms)} are not supported: only ('cpu',)")
    jitted = fun_jit if isinstance(fun_jit, JitWrapped) else jit(fun_jit)

    def do_export(*args, **call_kwargs):
        low = lowering.lower(jitted, args, call_kwargs)
        return Exported(low.fun_name, low.in_tree, low.out_tree, low.in_avals, low.out_avals, low.graph,
                        [_host_value(w) for w in low.weights])

    return do_export


def exported_from_loaded(fn, module_weights):
    """The Exported of a _core.LoadedFunction read from a file."""
    return Exported(fn.name, text_to_treedef(fn.in_tree), text_to_treedef(fn.out_tree),
                    [_aval(s) for s in fn.inputs], [_aval(s) for s in fn.outputs], fn.graph,
                    [module_weights[i] for i in fn.weights], loaded=fn)
