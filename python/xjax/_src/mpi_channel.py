"""Checked cross-process collectives: every wait is bounded and every mismatch is reported.

A collective runs in two steps. First (unless check_collectives is off) the processes check that
they all run the same collective: its number in program order, the crc32 and the length of its
description (op, dtype, shape, params) and their negations are reduced (MAX) over the processes --
the same on every process iff each maximum equals the minimum: O(log P) messages, whatever the
number of processes. Where the core has MPI (the shim builds here: ensure_installed) the core runs
this check (_core.mpi_check) as its all_reduce op runs its own, in the same messages as the data
(src/core/distributed/mpi.h), so the two kinds interleave in one program order; else an
all-reduce on the control communicator does. A mismatch, which every process learns at once, is
then named: the processes all-gather their signatures (number and description) and each reports
its own collective and the first process that differs. Then the collective's non-blocking MPI
operations are posted and polled. While waiting, a process reads the notices of processes that
failed or exited (distributed.py) and fails at once with their error, and answers roll calls: a
process whose check timed out asks every other one which collective it waits in, and names those
that do not answer with its own number within a second. The core's waits do the same.

A wait that fails leaves its MPI operations in flight (collectives cannot be cancelled): their
requests and buffers are kept for the life of the process (distributed.abandoned), so that a late
process's data never lands in freed memory.
"""
import os
import struct
import time
import zlib

import numpy as np

from xjax import _core
from xjax._src import distributed, mpi_shim
from xjax._src.distributed import ANSWER_TAG, EXCHANGE_TAG, NOTICE_TAG, ROLL_TAG, DistributedError, abandoned, state

_SIG_BYTES = 256
CORE_MPI = hasattr(_core, "mpi_install")  # (a core built without the all_reduce op has none)
_HEAD = struct.Struct("<qII")  # collective number, crc32 of the description, its length
_SPIN_S = 0.002  # poll without sleeping this long (the others are usually there), then back off
_ROLL_CALL_S = 1.0  # how long a process that timed out waits for the answers to its roll call
_SHARED_ENV = "XJAX_MPI_SHARED_MEMORY"  # 0: the collectives between processes of one host use MPI alone


class Signature:
    """A collective's description, encoded once: what the processes check before it runs (the
    collective's number in program order is written in per call). Programs keep theirs."""

    __slots__ = ("desc", "encoded", "crc", "length")

    def __init__(self, desc):
        raw = desc.encode()
        self.desc, self.crc, self.length = desc, zlib.crc32(raw), len(raw)
        buf = bytearray(_SIG_BYTES)
        _HEAD.pack_into(buf, 0, 0, self.crc, len(raw))
        shown = raw[:_SIG_BYTES - _HEAD.size]
        buf[_HEAD.size:_HEAD.size + len(shown)] = shown
        self.encoded = bytes(buf)


_signatures = {}  # description -> Signature, for callers that pass a description
bytes_sent = 0  # the bytes that collectives reporting them (run_collective's `sent`) sent to other processes


def signature(desc):
    sig = _signatures.get(desc)
    if sig is None:
        if len(_signatures) > 4096:  # a program sweeping over shapes: start over
            _signatures.clear()
        sig = _signatures[desc] = Signature(desc)
    return sig


_SEQ = struct.Struct("<q")


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


# ---- the failure paths' small messages: roll calls and their answers -----------------------------

_outbox = []  # (request, bytes) of roll calls and answers sent, until MPI is done with them


def _send_small(dest, tag, value):
    data = _SEQ.pack(value)
    _outbox.append((state.control.Isend([data, state.mpi.BYTE], dest=dest, tag=tag), data))


def _flush_outbox():
    if _outbox:
        _outbox[:] = [(r, data) for r, data in _outbox if not r.Test()]


def _receive_all(tag, on_message):
    """Receives every message waiting on `tag` (each probed first: no receive is left posted)."""
    MPI = state.mpi
    status = MPI.Status()
    while state.control.Iprobe(source=MPI.ANY_SOURCE, tag=tag, status=status):
        n, source = status.Get_count(MPI.BYTE), status.Get_source()
        buf = bytearray(max(n, _SEQ.size))
        state.control.Recv([buf, n, MPI.BYTE], source=source, tag=tag)
        on_message(source, _SEQ.unpack_from(buf)[0])


def _answer_roll_calls():
    """Tells every process that asked which collective this one waits in."""
    _receive_all(ROLL_TAG, lambda q, _: _send_small(q, ANSWER_TAG, state.seq))
    _flush_outbox()


def _absent_processes():
    """After a timeout: the processes that do not answer the roll call with this collective's number."""
    for q in _peers():
        _send_small(q, ROLL_TAG, state.seq)
    answer = {state.process_index: state.seq}
    start = time.monotonic()
    while True:
        _answer_roll_calls()
        _receive_all(ANSWER_TAG, answer.__setitem__)
        if all(answer.get(q) == state.seq for q in range(state.process_count)) or \
                time.monotonic() - start > min(_ROLL_CALL_S, state.timeout):
            break
        time.sleep(0.001)
    return [q for q in range(state.process_count) if answer.get(q) != state.seq]


# ---- the core's side of the channel ----------------------------------------------------------------

_installed_for = None  # the control communicator the core's MPI was installed with


def ensure_installed():
    """Hands the core the functions of the MPI shim, bound to mpi4py's MPI library and this run's
    communicators (once per initialize); False when the shim cannot be built or bound here (the
    programs then run their collectives from Python; xjax warns once, saying why)."""
    global _installed_for
    if _installed_for is state.control:
        return True
    if not CORE_MPI:
        return False
    try:
        functions = mpi_shim.bind(state.mpi, state.data, state.control)
    except mpi_shim.ShimError as e:
        mpi_shim.warn_once(e)
        return False
    _core.mpi_install({"functions": functions, "rank": state.process_index, "size": state.process_count,
                       "notice_tag": NOTICE_TAG, "roll_tag": ROLL_TAG, "answer_tag": ANSWER_TAG,
                       "exchange_tag": EXCHANGE_TAG})
    _installed_for = state.control
    return True


def share_memory():
    """At initialize, when the processes all live on this host: they map one shared-memory segment,
    through which the core then passes every collective's check and its all-reduces, faster than
    MPI messages (src/core/distributed/shared_slots.h). Every process takes part, so that they all
    agree: one that cannot open the segment (another host) or that has XJAX_MPI_SHARED_MEMORY=0
    makes them all use MPI alone."""
    comm, rank, size = state.control, state.process_index, state.process_count
    if size < 2:
        return
    wanted = CORE_MPI and os.environ.get(_SHARED_ENV, "1") != "0"
    name = None
    if rank == 0 and wanted:
        try:
            name = _core.mpi_shared_create(size)
        except RuntimeError:  # (no /dev/shm, or it is full)
            name = None
    name = comm.bcast(name, root=0)
    mapped = False
    if wanted and name:
        try:
            _core.mpi_share(name, size, rank)
            mapped = True
        except RuntimeError:  # another host's segment
            pass
    everyone = comm.allreduce(mapped, op=state.mpi.LAND)
    if rank == 0 and name:
        _core.mpi_shared_unlink(name)
    if mapped and not everyone:
        _core.mpi_unshare()


def release():
    """Forgets the installed MPI and the shared segment (distributed.shutdown, before the
    communicators are freed)."""
    global _installed_for
    if _installed_for is not None and CORE_MPI:
        _core.mpi_clear()
    if CORE_MPI:
        _core.mpi_unshare()
    _installed_for = None


distributed.on_initialize(share_memory)
distributed.on_shutdown(release)


def bracketed(body):
    """body(exited_after) begins and runs a program holding all_reduce ops: run's checks before it,
    the counter and the errors after it."""
    if state.failed is not None:
        raise DistributedError(f"an earlier collective across processes failed: {state.failed}", abort=False)
    if _installed_for is not state.control and not ensure_installed():  # (compiled before a shutdown and initialize)
        raise RuntimeError("the MPI library of this run cannot be handed to xjax's core")
    try:
        return body(min(state.exited.values()) if state.exited else 2 ** 62)
    except Exception as err:
        error = err
    finally:
        state.seq = _core.mpi_seq()
    raise_failure(error)


def raise_failure(err):
    """Raises what a program holding all_reduce ops that raised `err` (state.seq updated) gives: the
    DistributedError of a failed collective the core recorded, else err itself."""
    failure = _core.mpi_take_failure()
    if failure is None:
        raise err
    kind, message = failure
    if kind == "notice":  # another process failed or exited: its notice names it
        _check_notices(message)
        _fail(DistributedError(f"another process stopped while process {state.process_index} waits in collective "
                               f"#{state.seq} ({message})", abort=False))
    _fail(DistributedError(message, abort=kind != "mismatch"))


# ---- waiting, checking ---------------------------------------------------------------------------

def _wait(reqs, desc, on_timeout, keep):
    """Polls `reqs` until done; reads notices and answers roll calls meanwhile; on the deadline
    raises on_timeout()'s message. Raising, it keeps the requests and `keep` -- what holds their
    buffers (mpi4py's requests do not always: a collective's do not) -- for good."""
    Testall = state.mpi.Request.Testall
    if Testall(reqs):
        return
    try:
        start = time.monotonic()
        deadline = start + state.timeout
        polls = 0
        while not Testall(reqs):
            polls += 1
            if polls % 64:
                continue
            _answer_roll_calls()
            _check_notices(desc)
            now = time.monotonic()
            if now > deadline:
                _fail(DistributedError(on_timeout()))
            if now - start > _SPIN_S:
                time.sleep(min(0.001, (now - start) / 100))
    except BaseException:
        abandoned.append((reqs, keep))
        raise


def _check(sig):
    """Step 1: every process runs the same collective, else the difference is named. In the core
    when it has MPI (as the core's all-reduces check, so that the two kinds interleave): one
    exchange of the check alone; else an all-reduce of the check from here."""
    if ensure_installed():
        def check_in_core(exited):
            _core.mpi_begin(state.seq, state.timeout, exited)
            _core.mpi_check(sig.encoded)

        bracketed(check_in_core)
        return
    MPI, desc = state.mpi, sig.desc
    key = (state.seq, sig.crc, sig.length)
    mine = np.array(key + tuple(-k for k in key), np.int64)
    top = np.empty(6, np.int64)

    def missing():
        absent = _absent_processes()
        if not absent:
            return (f"collective #{state.seq} ({desc}) did not start on {_where()} within {state.timeout:g} s, "
                    f"though every process answered that it waits in it")
        return (f"process(es) {absent} did not reach collective #{state.seq} ({desc}) of {_where()} within "
                f"{state.timeout:g} s: they died, hang, or run a different program (the limit: "
                f"xjax.distributed.initialize(collective_timeout=...) or XJAX_COLLECTIVE_TIMEOUT)")

    _wait([state.control.Iallreduce(mine, top, op=MPI.MAX)], desc, missing, (mine, top))
    if (top[:3] == -top[3:]).all():
        return
    # The failure path: every process's signature, to name the difference.
    own = bytearray(sig.encoded)
    _SEQ.pack_into(own, 0, state.seq)
    everyone = bytearray(_SIG_BYTES * state.process_count)
    mismatch = f"mismatched collectives across processes: {_where()} runs collective #{state.seq} {desc}"
    _wait([state.control.Iallgather([own, MPI.BYTE], [everyone, MPI.BYTE])], desc,
          lambda: f"{mismatch}; the others' descriptions did not arrive within {state.timeout:g} s", (own, everyone))
    for q in _peers():
        theirs = everyone[q * _SIG_BYTES:(q + 1) * _SIG_BYTES]
        if theirs[:_HEAD.size] != own[:_HEAD.size]:
            seq, _, text = _decode(theirs)
            _fail(DistributedError(f"{mismatch}, process {q} runs collective #{seq} {text}", abort=False))
    _fail(DistributedError(f"{mismatch}, and another process a different one", abort=False))


def run_collective(desc, start, sent=0):
    """Runs one cross-process collective.

    desc: its description (op, dtype, shape, params), the same on every process: a string, or its
      Signature (made once by a caller that runs the collective often).
    start(comm): posts its non-blocking MPI operations on the data communicator; returns their requests.
      It holds the buffers of those operations (in its closure): kept with them if the wait fails.
    sent: the bytes it sends to other processes, added to bytes_sent (what tests check).
    """
    global bytes_sent
    if state.mpi is None:
        raise RuntimeError("a collective across processes ran before xjax.distributed.initialize()")
    if state.failed is not None:
        raise DistributedError(f"an earlier collective across processes failed: {state.failed}", abort=False)
    sig = desc if type(desc) is Signature else signature(desc)
    state.seq += 1
    bytes_sent += sent
    if state.process_count == 1:
        reqs = start(state.data)
        state.mpi.Request.Waitall(reqs)
        return
    if state.check:
        _check(sig)
    try:
        reqs = start(state.data)
    except BaseException:  # (some of its operations may be in flight: their buffers stay)
        abandoned.append(([], start))
        raise
    _wait(reqs, sig.desc, lambda: (f"collective #{state.seq} ({sig.desc}) did not complete on {_where()} within "
                                   f"{state.timeout:g} s: a process died or stopped during it"), start)
