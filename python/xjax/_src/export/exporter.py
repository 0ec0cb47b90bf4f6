"""Several functions (and several signatures of one) in one .xjx file, with their weights stored
once; and reading such a file back (ExportedModule)."""
import numpy as np

from xjax import _core
from xjax._src import data_leaves
from xjax._src.export import writing
from xjax._src.export.exported import Exported, export, exported_from_loaded

_DEFAULT_LIMIT = 1 << 34


class Exporter:
    """Collects exported functions for one .xjx file.

        ex = xjax.export.Exporter()
        ex.add(predict, params, xjax.ShapeDtypeStruct((1, 64), jnp.float32))
        ex.add(predict, params, xjax.ShapeDtypeStruct((32, 64), jnp.float32))  # a second signature
        ex.add(train_step, params, opt_state, x, y, name="train_step")
        ex.save("model.xjx")            # or blob = ex.serialize()

    A name may have several signatures (different input shapes or dtypes); a caller picks one by
    its arguments. An array that several functions close over is stored once. As a context
    manager, `with xjax.export.exporter("model.xjx") as ex:` saves on leaving the block. Given a
    function, the exporter is called with each signature's arguments (as MLX's exporter):

        with xjax.export.exporter("predict.xjx", predict) as ex:
            ex(x_one)
            ex(x_batch)
    """

    def __init__(self, path=None, fun=None, name=None):
        self.path = path
        self._fun = fun
        self._name = name
        self._functions = []  # (name, Exported)

    def __call__(self, *args, **kwargs):
        """Adds a signature of the function given at construction; returns its Exported."""
        if self._fun is None:
            raise TypeError("Exporter: no function was given at construction; use add(fun, *args)")
        return self.add(self._fun, *args, name=self._name, **kwargs)

    def add(self, fun, *args, name=None, **kwargs):
        """Exports fun for these arguments (arrays or ShapeDtypeStructs) under `name` (default:
        the function's name); returns the Exported."""
        exp = export(fun)(*args, **kwargs)
        self.add_exported(exp, name)
        return exp

    def add_exported(self, exp, name=None):
        """Adds an Exported under `name` (default: its fun_name)."""
        if not isinstance(exp, Exported):
            raise TypeError(f"Exporter.add_exported takes an Exported, got {type(exp).__name__}")
        name = exp.fun_name if name is None else str(name)
        for other_name, other in self._functions:
            if other_name == name and [(a.shape, a.dtype) for a in other.in_avals] == \
                    [(a.shape, a.dtype) for a in exp.in_avals]:
                raise ValueError(f"Exporter: '{name}' already has a signature with these argument types")
        self._functions.append((name, exp))

    def serialize(self):
        """The .xjx bytes of every function added."""
        return writing.write_file(self._functions)

    def save(self, path=None):
        """Writes the file (to `path`, or the path given at construction)."""
        path = self.path if path is None else path
        if path is None:
            raise ValueError("Exporter.save: no path given")
        data = self.serialize()
        with open(path, "wb") as f:
            f.write(data)
        return path

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.save()
        return False


def exporter(path=None, fun=None, name=None):
    """An Exporter; as a context manager it saves to `path` when the block ends without error.
    Given `fun`, calling the exporter adds a signature of it (under `name`, default its name)."""
    return Exporter(path, fun, name)


class ExportedModule:
    """The functions of an .xjx file: `names`, `signatures(name)` (Exported per signature),
    `module[name]` (the Exported of a name with one signature) and `call(name, *args)`, which picks
    the signature that the arguments' shapes and dtypes match."""

    def __init__(self, core_module):
        self._module = core_module
        weights = core_module.weights
        self._by_name = {}
        for fn in core_module.functions:
            self._by_name.setdefault(fn.name, []).append(exported_from_loaded(fn, weights))
        self.producer = core_module.producer
        self.format_version = core_module.format_version
        self.opset_version = core_module.opset_version

    @property
    def names(self):
        return tuple(self._by_name)

    def signatures(self, name):
        try:
            return tuple(self._by_name[name])
        except KeyError:
            raise KeyError(f"the module has no function '{name}'; it has {list(self._by_name)}") from None

    def __getitem__(self, name):
        sigs = self.signatures(name)
        if len(sigs) > 1:
            raise ValueError(f"'{name}' has {len(sigs)} signatures: pick one with signatures('{name}') or let "
                             f"call('{name}', ...) choose by the arguments")
        return sigs[0]

    def __contains__(self, name):
        return name in self._by_name

    def call(self, name, *args, **kwargs):
        """Calls the signature of `name` that the arguments match."""
        sigs = self.signatures(name)
        if len(sigs) == 1:
            return sigs[0].call(*args, **kwargs)
        leaves, tree = data_leaves.flatten((args, kwargs))
        got = [(np.shape(x), getattr(x, "dtype", None)) for x in leaves]
        for exp in sigs:
            if tree == exp.in_tree and all(s == a.shape and (d is None or d == a.dtype)
                                           for (s, d), a in zip(got, exp.in_avals)):
                return exp.call(*args, **kwargs)
        raise ValueError(f"'{name}': no signature takes these arguments; it has " +
                         "; ".join(repr(e) for e in sigs))


def deserialize_module(blob, *, verify_checksum=True, max_array_bytes=_DEFAULT_LIMIT):
    """Reads .xjx bytes: an ExportedModule of every function in them. Raises ValueError for bytes
    that are not a readable .xjx file (naming what is wrong)."""
    return ExportedModule(_core.xjx_read(_contiguous(blob), verify_checksum, max_array_bytes))


def _contiguous(blob):
    """The bytes of a buffer as one C-contiguous run (a strided view, such as a reversed array, copied)."""
    view = memoryview(blob)
    return blob if view.c_contiguous else view.tobytes(order="C")


def load(path, *, mmap=False, verify_checksum=True, max_array_bytes=_DEFAULT_LIMIT):
    """Reads an .xjx file: an ExportedModule.

    By default the file is read into memory, so that replacing or editing it later does not touch
    the loaded module. mmap=True maps it instead and uses its weights in place (no copy, pages read
    on demand): the file must then stay as it is while the module lives; truncating it (as `cp` over
    it does) kills the process with SIGBUS at the next call, and editing it changes the weights.
    """
    return ExportedModule(_core.xjx_load(str(path), verify_checksum, max_array_bytes, bool(mmap)))


def deserialize(blob, *, verify_checksum=True, max_array_bytes=_DEFAULT_LIMIT):
    """The Exported that Exported.serialize() wrote (a file of one function with one signature;
    use deserialize_module for others). Raises ValueError for unreadable bytes."""
    module = deserialize_module(blob, verify_checksum=verify_checksum, max_array_bytes=max_array_bytes)
    sigs = [e for n in module.names for e in module.signatures(n)]
    if len(sigs) != 1:
        raise ValueError(f"xjax.export.deserialize: the file holds {len(sigs)} functions {list(module.names)}; "
                         "read it with deserialize_module")
    return sigs[0]
