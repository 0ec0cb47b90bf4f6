"""The collectives of lax/parallel.py across processes: each lowered to one MPI operation.

pmap over the devices of several processes (xjax/_src/pmap.py) runs a collective equation here.
A process holds the shards of its own devices -- L of them, at global indices offset .. offset+L-1
of an axis of size N = L * process_count -- and each rule maps the local shards of the operand
(xjax Arrays) to the local shards of the result, in the same order on every process:

  psum, pmax, pmin   -> Iallreduce (SUM, MAX, MIN) of the local shards' reduction
  all_gather         -> Iallgather of the local shards, then the gathered axis moved into place
  psum_scatter       -> Ireduce_scatter_block of the local sum, the scatter axis in front
  all_to_all         -> Ialltoall, the chunks ordered by destination process
  ppermute           -> Isend/Irecv pairs between the processes of each (source, destination)
  axis_index         -> no communication: offset + local index

The bytes go between the arrays' buffers and MPI through mpi4py's buffer interface: sends read
the core's buffers in place and receives write into fresh core arrays (Array.empty), so the only
copies are MPI's own. Layout work around them (stacking local shards, moving an axis to the front)
is lax ops, run by the core. float16 and bfloat16, which MPI cannot reduce, are reduced as float32.
"""
import numpy as np

from xjax import _core
from xjax._src import core
from xjax._src.array import Array
from xjax._src.distributed import state
from xjax._src.interpreters import batching
from xjax._src.lax import elementwise, layout, reduction
from xjax._src.lax import parallel as P
from xjax._src.lax.base import asarray
from xjax._src.mpi_channel import run_collective, signature

_HAS_EMPTY = hasattr(_core.Array, "empty")
_WIDENED = {np.dtype(np.float16), np.dtype("bfloat16")}
_LOCAL_REDUCE = {"psum": reduction.reduce_sum, "pmax": reduction.reduce_max, "pmin": reduction.reduce_min}


class Shards:
    """Where this process's shards sit on the mapped axis: axis name, global size, offset, count."""

    def __init__(self, name, size, offset, count):
        self.name, self.size, self.offset, self.count = name, size, offset, count


# ---- buffers ------------------------------------------------------------------------------------

def _send_view(x, dtype=None):
    """x's bytes in place (read-only), typed for MPI's reductions when dtype is given."""
    raw = x._value.bytes_view()
    return raw if dtype is None else raw.view(dtype)


class _Fresh:
    """A new array that MPI fills: a core array's buffer, written once before anyone reads it."""

    def __init__(self, shape, dtype, weak_type=False):
        self.aval = core.ShapedArray(tuple(shape), np.dtype(dtype), weak_type)
        name = self.aval.dtype.name
        if _HAS_EMPTY:
            self.value = _core.Array.empty(self.aval.shape, name)
            self.view = self.value.writable_view()
        else:  # a core built before Array.empty: receive into NumPy, copy in afterwards
            self.value = None
            self.view = np.empty(self.aval.size * self.aval.dtype.itemsize, np.uint8)

    def typed(self):
        return self.view.view(self.aval.dtype)

    def array(self):
        if self.value is None:
            self.value = _core.Array.from_buffer(self.view, self.aval.shape, self.aval.dtype.name)
        return Array(self.value, self.aval)


def _stack_local(xs):
    """The local shards stacked along a new leading axis (one shard: itself, the same bytes)."""
    if len(xs) == 1:
        return xs[0]
    return layout.concatenate([layout.expand_dims(x, (0,)) for x in xs], 0)


def _shape_str(x):
    return f"{x.dtype.name}{list(x.shape)}"


def _desc(name, params, x):
    shown = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()) if k != "axis_size")
    return f"{name}({shown}) of {_shape_str(x)}"


def _mpi_op(name, dtype):
    MPI = state.mpi
    if dtype == np.bool_:
        return {"psum": MPI.SUM, "pmax": MPI.LOR, "pmin": MPI.LAND}[name]
    return {"psum": MPI.SUM, "pmax": MPI.MAX, "pmin": MPI.MIN}[name]


def _widened(rule):
    """rule run in float32 for 16-bit floats (which MPI cannot reduce), rounded once at the end."""

    def run(shards, xs, **params):
        dtype = xs[0].dtype
        if dtype not in _WIDENED:
            return rule(shards, xs, **params)
        outs = rule(shards, [elementwise.convert_element_type(x, np.float32) for x in xs], **params)
        return [elementwise.convert_element_type(o, dtype) for o in outs]

    return run


def _reduced(name, x, desc, out_shape, post):
    """Runs the reduction `post(comm, send, recv, op)` of x into a fresh array of out_shape."""
    dtype = x.dtype
    out = _Fresh(out_shape, dtype, x.aval.weak_type)
    send, recv, op = _send_view(x, dtype), out.typed(), _mpi_op(name, dtype)
    run_collective(desc, lambda comm: [post(comm, send, recv, op)])
    return out.array()


# ---- the rules ----------------------------------------------------------------------------------

def _allreduce_rule(name, local_reduce):
    def rule(shards, xs, *, axis_name):
        x = xs[0] if len(xs) == 1 else local_reduce(_stack_local(xs), (0,))
        out = _reduced(name, x, _desc(name, {"axis_name": axis_name}, x), x.shape,
                       lambda comm, send, recv, op: comm.Iallreduce(send, recv, op=op))
        return [out] * shards.count

    return _widened(rule)


def _allreduce_desc(name, axis_name, xs):
    return f"{name}(axis_name={axis_name!r}) of " + ", ".join(_shape_str(x) for x in xs)


def allreduce_many(prim, shards, operands, axis_name, sig=None):
    """Several independent psum (or pmax, pmin) equations as one message exchange: each operand's
    local shards reduced here, the results of one dtype packed into one buffer and all-reduced by
    one Iallreduce (a gradient's leaves, typically). Returns each equation's local result shards.
    sig: the exchange's Signature, when the caller keeps it (else made from the operands)."""
    name = prim.name
    xs = []
    for shards_of_one in operands:  # 16-bit floats summed in float32 from the start: rounded once, at the end
        if shards_of_one[0].dtype in _WIDENED:
            shards_of_one = [elementwise.convert_element_type(x, np.float32) for x in shards_of_one]
        xs.append(shards_of_one[0] if len(shards_of_one) == 1 else
                  _LOCAL_REDUCE[name](_stack_local(shards_of_one), (0,)))
    groups = {}  # dtype -> indices of the operands of that dtype
    for i, x in enumerate(xs):
        groups.setdefault(x.dtype, []).append(i)
    packed = []  # (indices, flat send array, fresh receive array)
    for dtype, idx in groups.items():
        flat = xs[idx[0]] if len(idx) == 1 and xs[idx[0]].ndim == 1 else \
            layout.concatenate([layout.reshape(xs[i], (xs[i].size,)) for i in idx], 0)
        packed.append((idx, flat, _Fresh((flat.size,), dtype, all(xs[i].aval.weak_type for i in idx))))
    run_collective(sig or _allreduce_desc(name, axis_name, xs),
                   lambda comm: [comm.Iallreduce(_send_view(flat, out.aval.dtype), out.typed(),
                                                 op=_mpi_op(name, out.aval.dtype)) for _, flat, out in packed])
    results = [None] * len(xs)
    for idx, _, out in packed:
        whole, start = out.array(), 0
        for i in idx:
            n = xs[i].size
            piece = whole if len(idx) == 1 and whole.shape == xs[i].shape else \
                layout.reshape(layout.slice(whole, (start,), (start + n,)), xs[i].shape)
            dtype = operands[i][0].dtype
            results[i] = elementwise.convert_element_type(piece, dtype) if piece.dtype != dtype else piece
            start += n
    return [[r] * shards.count for r in results]


class Allreduce:
    """Independent psum (pmax, pmin) equations of one program step across processes, as one
    exchange (allreduce_many), prepared at the first run for the runs that follow (the operands'
    types are the program's): its description and Signature, and for the common case -- one
    operand, one local shard, a dtype MPI reduces -- the MPI datatype and op, so that a run posts
    one Iallreduce from the operand's buffer into a fresh array with no other work."""

    def __init__(self, prim, axis_name):
        self.prim, self.axis_name = prim, axis_name
        self.sig = None
        self.direct = False

    def _prepare(self, operands):
        name = self.prim.name
        xs = [ops[0] for ops in operands]
        shown = [x.aval.update(dtype=np.float32) if x.dtype in _WIDENED else x.aval for x in xs]
        self.sig = signature(_allreduce_desc(name, self.axis_name, shown))
        x = xs[0]
        # MPI's predefined type of the dtype, as mpi4py picks for a NumPy array (reductions need one).
        self.mpi_type = getattr(state.mpi, "_typedict", {}).get(x.dtype.char)
        self.direct = (_HAS_EMPTY and len(operands) == 1 and len(operands[0]) == 1 and x.dtype not in _WIDENED
                       and self.mpi_type is not None)
        if self.direct:
            self.aval, self.dtype_name, self.op = x.aval, x.dtype.name, _mpi_op(name, x.dtype)

    def __call__(self, shards, operands):
        """operands: per equation, its local shards; returns per equation its local result shards."""
        if self.sig is None:
            self._prepare(operands)
        if not self.direct:
            return allreduce_many(self.prim, shards, operands, self.axis_name, self.sig)
        x = operands[0][0]
        out = _core.Array.empty(self.aval.shape, self.dtype_name)
        send, recv, t, op = x._value.bytes_view(), out.writable_view(), self.mpi_type, self.op
        run_collective(self.sig, lambda comm: [comm.Iallreduce([send, t], [recv, t], op=op)])
        return [[Array(out, self.aval)]]


def _axis_index_rule(shards, xs, *, axis_name):
    return [asarray(np.int32(shards.offset + j)) for j in range(shards.count)]


def _all_gather_rule(shards, xs, *, axis_name, all_gather_dimension, axis_size, tiled):
    MPI = state.mpi
    local = _stack_local(xs)
    x0 = xs[0]
    gathered = _Fresh((shards.size,) + x0.shape, x0.dtype, x0.aval.weak_type)
    send = _send_view(local)
    params = dict(axis_name=axis_name, all_gather_dimension=all_gather_dimension, tiled=tiled)
    run_collective(_desc("all_gather", params, x0),
                   lambda comm: [comm.Iallgather([send, MPI.BYTE], [gathered.view, MPI.BYTE])])
    # Every shard's value stacked along axis 0: what the vmap rule puts in place.
    axis = batching.AxisData(shards.name, shards.size)
    out, _ = P.all_gather_p.batch(axis, [gathered.array()], [0], axis_name=axis_name, axis_size=axis_size,
                                  all_gather_dimension=all_gather_dimension, tiled=tiled)
    return [out] * shards.count


@_widened
def _psum_scatter_rule(shards, xs, *, axis_name, scatter_dimension, axis_size, tiled):
    local = xs[0] if len(xs) == 1 else reduction.reduce_sum(_stack_local(xs), (0,))
    front = batching.moveaxis(local, scatter_dimension, 0)  # device g's block: rows g*b .. (g+1)*b
    rows = front.shape[0]
    b = rows // shards.size
    params = dict(axis_name=axis_name, scatter_dimension=scatter_dimension, tiled=tiled)
    mine = _reduced("psum", front, _desc("psum_scatter", params, local), (shards.count * b,) + front.shape[1:],
                    lambda comm, send, recv, op: comm.Ireduce_scatter_block(send, recv, op=op))
    outs = []
    for j in range(shards.count):
        block = layout.slice_in_dim(mine, j * b, (j + 1) * b, axis=0) if shards.count > 1 else mine
        outs.append(batching.moveaxis(block, 0, scatter_dimension) if tiled else layout.squeeze(block, (0,)))
    return outs


def _all_to_all_rule(shards, xs, *, axis_name, split_axis, concat_axis, axis_size, tiled):
    MPI = state.mpi
    n, count, procs = shards.size, shards.count, state.process_count
    x0 = xs[0]
    # Each shard with the chunks (one per destination device) along a leading axis of size n.
    fronts = []
    for x in xs:
        f = batching.moveaxis(x, split_axis, 0)
        if tiled:
            f = layout.reshape(f, (n, f.shape[0] // n) + f.shape[1:])
        fronts.append(f)
    chunk = fronts[0].shape[1:]
    # [source local j, destination process q, destination local k] -> [q, j, k]: MPI's send blocks by q.
    stacked = _stack_local(fronts)
    stacked = layout.reshape(stacked, (count, procs, count) + chunk)
    send_arr = layout.transpose(stacked, (1, 0, 2) + tuple(range(3, 3 + len(chunk))))
    recv = _Fresh((procs, count, count) + chunk, x0.dtype, x0.aval.weak_type)  # [source q, source j, my k]
    send = _send_view(send_arr)
    params = dict(axis_name=axis_name, split_axis=split_axis, concat_axis=concat_axis, tiled=tiled)
    run_collective(_desc("all_to_all", params, x0), lambda comm: [comm.Ialltoall([send, MPI.BYTE], [recv.view, MPI.BYTE])])
    got = layout.transpose(recv.array(), (2, 0, 1) + tuple(range(3, 3 + len(chunk))))
    got = layout.reshape(got, (count, n) + chunk)  # [my k, source device g]
    outs = []
    for k in range(count):
        y = layout.index_in_dim(got, k, 0, keepdims=False) if count > 1 else layout.reshape(got, (n,) + chunk)
        if not tiled:  # chunks lost the split axis: the source axis goes in at concat_axis
            outs.append(batching.moveaxis(y, 0, concat_axis))
            continue
        y = batching.moveaxis(y, 1, 1 + split_axis)  # each chunk back in the operand's layout
        y = batching.moveaxis(y, 0, concat_axis)  # sources, in order, just before the concat axis
        shape = y.shape
        outs.append(layout.reshape(y, shape[:concat_axis] + (shape[concat_axis] * shape[concat_axis + 1],)
                                   + shape[concat_axis + 2:]))
    return outs


def _ppermute_rule(shards, xs, *, axis_name, perm):
    MPI = state.mpi
    me, count = state.process_index, shards.count
    outs = [None] * count
    sends, recvs = [], []
    for s, t in perm:
        (sp, sj), (tp, tj) = divmod(s, count), divmod(t, count)
        if sp == me and tp == me:
            outs[tj] = xs[sj]
        elif sp == me:
            sends.append((_send_view(xs[sj]), tp, t))
        elif tp == me:
            fresh = _Fresh(xs[0].shape, xs[0].dtype, xs[0].aval.weak_type)
            recvs.append((fresh, sp, t))
            outs[tj] = fresh

    def start(comm):  # a message's tag is its destination device: unique within one ppermute
        reqs = [comm.Irecv([f.view, MPI.BYTE], source=sp, tag=t) for f, sp, t in recvs]
        return reqs + [comm.Isend([v, MPI.BYTE], dest=tp, tag=t) for v, tp, t in sends]

    run_collective(_desc("ppermute", {"axis_name": axis_name, "perm": perm}, xs[0]), start)
    zero = None
    for j, o in enumerate(outs):
        if isinstance(o, _Fresh):
            outs[j] = o.array()
        elif o is None:  # nobody sends to this device
            if zero is None:
                zero = layout.broadcast_in_dim(P._const_like(xs[0], 0), xs[0].shape, ())
            outs[j] = zero
    return outs


RULES = {
    P.psum_p: _allreduce_rule("psum", _LOCAL_REDUCE["psum"]),
    P.psum_invariant_p: _allreduce_rule("psum", _LOCAL_REDUCE["psum"]),
    P.pmax_p: _allreduce_rule("pmax", _LOCAL_REDUCE["pmax"]),
    P.pmin_p: _allreduce_rule("pmin", _LOCAL_REDUCE["pmin"]),
    P.axis_index_p: _axis_index_rule,
    P.all_gather_p: _all_gather_rule,
    P.reduce_scatter_p: _psum_scatter_rule,
    P.all_to_all_p: _all_to_all_rule,
    P.ppermute_p: _ppermute_rule,
}


def allgather_stack(shards, xs):
    """Every device's shard of one value, stacked along a new axis 0 (pmap's general fallback)."""
    return _all_gather_rule(shards, xs, axis_name=(shards.name,), all_gather_dimension=0, axis_size=shards.size,
                            tiled=False)[0]


def run(prim, shards, xs, params):
    """The local shards of a collective's result, computed across processes."""
    names = params.get("axis_name")
    if names != (shards.name,):
        raise NotImplementedError(f"pmap across processes: '{prim.name}' over axes {names}; xjax runs collectives "
                                  f"across processes over the pmapped axis ({shards.name!r}) alone")
    return RULES[prim](shards, xs, **params)
