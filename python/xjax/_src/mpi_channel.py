"""Checked cross-process collectives: every wait is bounded and every mismatch is reported.

A collective runs in two steps. First (unless check_collectives is off) each process sends every
other one a signature -- the collective's number in program order and a description of it (op,
dtype, shape, params) -- and compares what it receives: a process that does not arrive within the
timeout is named, and a different collective, shape or order is reported on every process before
any data moves. Then the collective's non-blocking MPI operations are posted and polled. While
waiting, a process reads the notices of processes that failed or exited (distributed.py) and fails
at once with their error.
"""
import struct
import time
import zlib

from xjax._src.distributed import NOTICE_TAG, DistributedError, state

SIG_TAG = 1
_SIG_BYTES = 256
_HEAD = struct.Struct("<qII")  # collective number, crc32 of the description, its length
_SPIN_S = 0.002  # poll without sleeping this long (the others are usually there), then back off


class Signature:
    """A collective's description, encoded once: what each process sends the others before it runs
    (the collective's number in program order is written in per call). Programs keep theirs."""

    __slots__ = ("desc", "encoded", "crc")

    def __init__(self, desc):
        raw = desc.encode()
        self.desc, self.crc = desc, zlib.crc32(raw)
        buf = bytearray(_SIG_BYTES)
        _HEAD.pack_into(buf, 0, 0, self.crc, len(raw))
        shown = raw[:_SIG_BYTES - _HEAD.size]
        buf[_HEAD.size:_HEAD.size + len(shown)] = shown
        self.encoded = bytes(buf)


_signatures = {}  # description -> Signature, for callers that pass a description


def signature(desc):
    sig = _signatures.get(desc)
    if sig is None:
        if len(_signatures) > 4096:  # a program sweeping over shapes: start over
            _signatures.clear()
        sig = _signatures[desc] = Signature(desc)
    return sig


class _Exchange:
    """The signature exchange's buffers and persistent MPI requests (one send to and one receive
    from every other process), made once per communicator and restarted by every collective."""

    def __init__(self, comm, peers):
        self.comm, self.peers = comm, peers
        self.send = bytearray(_SIG_BYTES)
        self.recv = [bytearray(_SIG_BYTES) for _ in peers]
        self.recv_reqs = [comm.Recv_init(buf, source=q, tag=SIG_TAG) for buf, q in zip(self.recv, peers)]
        self.reqs = self.recv_reqs + [comm.Send_init(self.send, dest=q, tag=SIG_TAG) for q in peers]

    def free(self):
        for r in self.reqs:
            r.Free()


_SEQ = struct.Struct("<q")
_exchange = None


def release():
    """Frees the exchange's requests (before its communicator is freed: distributed.shutdown)."""
    global _exchange
    if _exchange is not None:
        _exchange.free()
        _exchange = None


def _decode(buf):
    seq, crc, length = _HEAD.unpack_from(buf, 0)
    shown = min(length, _SIG_BYTES - _HEAD.size)
    text = bytes(buf[_HEAD.size:_HEAD.size + shown]).decode(errors="replace")
    return seq, crc, text + ("..." if shown < length else "")


def _peers():
    return [q for q in range(state.process_count) if q != state.process_index]


def _where():
    return f"process {state.process_index}"


def _fail(error):
    state.failed = error
    raise error


def _check_notices(desc):
    """Raises the error of a process that failed, or exited before reaching this collective."""
    MPI = state.mpi
    status = MPI.Status()
    while state.control.Iprobe(source=MPI.ANY_SOURCE, tag=NOTICE_TAG, status=status):
        msg = state.control.recv(source=status.Get_source(), tag=NOTICE_TAG)
        q = msg["process"]
        if msg["kind"] == "error":
            _fail(DistributedError(f"process {q} failed ({msg['text']}); {_where()} stopped in collective "
                                   f"#{state.seq} ({desc})", abort=False))
        state.exited[q] = msg["seq"]
    for q, seq in state.exited.items():
        if seq < state.seq:
            _fail(DistributedError(f"process {q} exited after {seq} collective(s) while {_where()} waits in "
                                   f"collective #{state.seq} ({desc}): the processes ran different collectives",
                                   abort=False))


def _wait(reqs, desc, on_timeout):
    """Polls `reqs` until done; reads notices meanwhile; on the deadline raises on_timeout()'s message."""
    Testall = state.mpi.Request.Testall
    if Testall(reqs):
        return
    start = time.monotonic()
    deadline = start + state.timeout
    polls = 0
    while not Testall(reqs):
        polls += 1
        if polls % 64:
            continue
        _check_notices(desc)
        now = time.monotonic()
        if now > deadline:
            _fail(DistributedError(on_timeout()))
        if now - start > _SPIN_S:
            time.sleep(min(0.001, (now - start) / 100))


def _exchange_signatures(sig):
    global _exchange
    ex = _exchange
    if ex is None or ex.comm is not state.control:
        ex = _exchange = _Exchange(state.control, _peers())
    send = ex.send
    send[:] = sig.encoded
    _SEQ.pack_into(send, 0, state.seq)
    state.mpi.Prequest.Startall(ex.reqs)
    desc = sig.desc

    def missing():
        absent = [q for q, r in zip(ex.peers, ex.recv_reqs) if not r.Test()]
        return (f"process(es) {absent} did not reach collective #{state.seq} ({desc}) of {_where()} within "
                f"{state.timeout:g} s: they died, hang, or run a different program (the limit: "
                f"xjax.distributed.initialize(collective_timeout=...) or XJAX_COLLECTIVE_TIMEOUT)")

    _wait(ex.reqs, desc, missing)
    for q, buf in zip(ex.peers, ex.recv):
        seq, crc, _ = _HEAD.unpack_from(buf, 0)
        if seq != state.seq or crc != sig.crc:
            seq, crc, text = _decode(buf)
            _fail(DistributedError(f"mismatched collectives across processes: {_where()} runs collective "
                                   f"#{state.seq} {desc}, process {q} runs collective #{seq} {text}", abort=False))


def run_collective(desc, start):
    """Runs one cross-process collective.

    desc: its description (op, dtype, shape, params), the same on every process: a string, or its
      Signature (made once by a caller that runs the collective often).
    start(comm): posts its non-blocking MPI operations on the data communicator; returns their requests.
    """
    if state.mpi is None:
        raise RuntimeError("a collective across processes ran before xjax.distributed.initialize()")
    if state.failed is not None:
        raise DistributedError(f"an earlier collective across processes failed: {state.failed}", abort=False)
    sig = desc if type(desc) is Signature else signature(desc)
    state.seq += 1
    if state.process_count == 1:
        reqs = start(state.data)
        state.mpi.Request.Waitall(reqs)
        return
    if state.check:
        _exchange_signatures(sig)
    reqs = start(state.data)
    _wait(reqs, sig.desc, lambda: (f"collective #{state.seq} ({sig.desc}) did not complete on {_where()} within "
                                   f"{state.timeout:g} s: a process died or stopped during it"))
