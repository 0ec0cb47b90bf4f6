"""all_gather, ppermute, all_to_all and psum_scatter over a mesh across processes, as block routes.

Each such collective is, per group of devices (those that differ only along its axes; member k of
a group is the device's position along the axes, row-major in the order axis_name lists them), a
set of routes: member s sends a piece of its block (the whole block, or a chunk of it) to member d,
and d combines the pieces it receives in the order of their senders. A route is fixed by the
collective's parameters alone, so every process knows every route without asking. Pieces between
devices of one process are used as they are; the rest go in one MPI all-to-all (Ialltoallv of
bytes): each process sends each other process exactly the pieces its devices need, in the order
(destination device, source device) -- the order both sides know -- and nothing where no route
crosses. Where no route crosses any process boundary there is no exchange at all.

  all_gather:   every member sends its block to every member; the blocks stacked (or concatenated)
  ppermute:     the pairs of perm; a device that nobody sends to gets zeros
  all_to_all:   member s sends chunk d of its split axis to member d; the chunks along concat_axis
  psum_scatter: member s sends chunk d of its scatter dimension to member d, which sums them
"""
import numpy as np

from xjax._src import mpi_channel
from xjax._src.distributed import state
from xjax._src.lax import layout
from xjax._src.lax import parallel as P
from xjax._src.lax.parallel_mpi import _Fresh, _desc, _send_view


def _stacked(pieces, axis, tiled):
    """The pieces along `axis`: concatenated (tiled) or each as a new axis there."""
    if tiled:
        return layout.concatenate(pieces, axis)
    return layout.concatenate([layout.expand_dims(p, (axis,)) for p in pieces], axis)


def _chunk(x, axis, k, n, tiled):
    """Chunk k of n along axis: a slice (tiled), or index k with the axis dropped."""
    if tiled:
        c = x.shape[axis] // n
        return layout.slice_in_dim(x, k * c, (k + 1) * c, axis=axis)
    return layout.index_in_dim(x, k, axis, keepdims=False)


def _chunk_shape(shape, axis, n, tiled):
    shape = list(shape)
    if tiled:
        shape[axis] //= n
    else:
        del shape[axis]
    return tuple(shape)


class _AllGather:
    def __init__(self, n, all_gather_dimension, tiled, **_):
        self.n, self.dim, self.tiled = n, all_gather_dimension, tiled

    def targets(self, s):
        return range(self.n)

    def piece(self, x, d):
        return x

    def piece_shape(self, shape):
        return shape

    def combine(self, pieces, d, like):
        return _stacked(pieces, self.dim, self.tiled)


class _Ppermute:
    def __init__(self, n, perm, **_):
        self.n, self.perm = n, tuple(tuple(p) for p in perm)

    def targets(self, s):
        return [t for f, t in self.perm if f == s]

    def piece(self, x, d):
        return x

    def piece_shape(self, shape):
        return shape

    def combine(self, pieces, d, like):
        got = [p for p in pieces if p is not None]
        if got:
            return got[0]
        return layout.broadcast_in_dim(P._const_like(like, 0), like.shape, ())


class _AllToAll:
    def __init__(self, n, split_axis, concat_axis, tiled, **_):
        self.n, self.split, self.concat, self.tiled = n, split_axis, concat_axis, tiled

    def targets(self, s):
        return range(self.n)

    def piece(self, x, d):
        return _chunk(x, self.split, d, self.n, self.tiled)

    def piece_shape(self, shape):
        return _chunk_shape(shape, self.split, self.n, self.tiled)

    def combine(self, pieces, d, like):
        return _stacked(pieces, self.concat, self.tiled)


class _ReduceScatter(_AllToAll):
    def __init__(self, n, scatter_dimension, tiled, **_):
        self.n, self.split, self.tiled = n, scatter_dimension, tiled

    def combine(self, pieces, d, like):
        total = pieces[0]
        for p in pieces[1:]:  # in the senders' order, on every device alike
            total = total + p
        return total


KINDS = {P.all_gather_p: _AllGather, P.ppermute_p: _Ppermute, P.all_to_all_p: _AllToAll,
         P.reduce_scatter_p: _ReduceScatter}


class Routes:
    """One collective's routes over a mesh across processes (a mesh_across.MeshPlace), fixed by its
    parameters: which local pieces go where, what arrives from which process, and in which order."""

    def __init__(self, place, prim, params):
        axis_name = params["axis_name"]
        names = [name for name, _ in place.mesh_axes]
        missing = [a for a in axis_name if a not in names]
        if missing:
            raise NotImplementedError(f"'{prim}' over the axes {axis_name} inside shard_map across processes: "
                                      f"{missing} are no axes of its mesh")
        sizes = [s for _, s in place.mesh_axes]
        n = int(np.prod([sizes[names.index(a)] for a in axis_name], dtype=np.int64))
        self.kind = KINDS[prim](n, **params)
        self.prim, self.params, self.n = prim, params, n
        # Per mesh device: its group (the positions along the other axes) and its member index.
        group, member, members = [], [], {}
        for i in range(place.size):
            pos = np.unravel_index(i, sizes)
            g = tuple(int(pos[k]) for k, name in enumerate(names) if name not in axis_name)
            m = int(np.ravel_multi_index([pos[names.index(a)] for a in axis_name], [sizes[names.index(a)]
                                                                                   for a in axis_name]))
            group.append(g)
            member.append(m)
            members.setdefault(g, [None] * n)[m] = i
        me, process = state.process_index, place.process
        where = {i: j for j, i in enumerate(place.local)}  # mesh device -> its local index
        # Every route (source device, destination device, destination member), in (destination, source) order.
        routes = sorted((members[group[i]][d], i, d) for i in range(place.size) for d in self.kind.targets(member[i]))
        self.member = [member[i] for i in place.local]
        self.sends = [[] for _ in range(state.process_count)]  # per process: (local source, member d)
        self.recvs = [[] for _ in range(state.process_count)]  # per process: (local destination, source member)
        self.local = []  # (local source, member d, local destination, source member)
        crossing = False
        for j, i, d in routes:
            crossing |= process[i] != process[j]
            if process[i] == me and process[j] == me:
                self.local.append((where[i], d, where[j], member[i]))
            elif process[i] == me:
                self.sends[process[j]].append((where[i], d))
            elif process[j] == me:
                self.recvs[process[i]].append((where[j], member[i]))
        self.crossing = crossing
        self.count = len(place.local)
        self.received_pieces = sum(map(len, self.recvs))

    def __call__(self, blocks):
        """The local devices' results from their blocks (one per local device, in mesh order)."""
        kind, x0 = self.kind, blocks[0]
        shape = kind.piece_shape(x0.shape)
        got = [[None] * self.n for _ in range(self.count)]  # per local device, per source member
        for src, d, dst, s in self.local:
            got[dst][s] = kind.piece(blocks[src], d)
        if self.crossing:
            for dst, s, piece in self._exchange(blocks, shape):
                got[dst][s] = piece
        return [kind.combine(pieces, m, x0) for pieces, m in zip(got, self.member)]

    def _exchange(self, blocks, shape):
        """The pieces from other processes, as (local destination, source member, piece), after one
        Ialltoallv carrying exactly the pieces that cross processes."""
        kind, x0 = self.kind, blocks[0]
        size = int(np.prod(shape, dtype=np.int64))
        nbytes = size * x0.dtype.itemsize
        flat = [layout.reshape(kind.piece(blocks[src], d), (size,)) for per in self.sends for src, d in per]
        send = (flat[0] if len(flat) == 1 else layout.concatenate(flat, 0)) if flat else None
        recv = _Fresh((self.received_pieces * size,), x0.dtype, x0.aval.weak_type)
        send_counts = [len(per) * nbytes for per in self.sends]
        recv_counts = [len(per) * nbytes for per in self.recvs]
        send_view = _send_view(send) if send is not None else np.empty(0, np.uint8)
        MPI = state.mpi

        def start(comm):
            return [comm.Ialltoallv([send_view, (send_counts, _offsets(send_counts)), MPI.BYTE],
                                    [recv.view, (recv_counts, _offsets(recv_counts)), MPI.BYTE])]

        mpi_channel.run_collective(_desc(self.prim.name, self.params, x0), start, sent=sum(send_counts))
        whole, k = recv.array(), 0
        for per in self.recvs:
            for dst, s in per:
                yield dst, s, layout.reshape(layout.slice(whole, (k * size,), ((k + 1) * size,)), shape)
                k += 1


def _offsets(counts):
    return [int(c) for c in np.cumsum([0] + counts[:-1])]
