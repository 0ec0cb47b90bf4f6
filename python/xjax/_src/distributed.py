"""Multi-process runs: one xjax process per MPI rank (mpirun / srun), joined through mpi4py.

initialize() finds the processes through MPI (the launcher did the rendezvous: no coordinator
address is needed), numbers every process's CPU devices globally, and makes two communicators out
of MPI's world: `data` carries the collectives' bytes, `control` the checks around them (each
collective's check all-reduce, roll calls, and notices of a process that failed or exited;
xjax/_src/mpi_channel.py). MPI must provide MPI_THREAD_SERIALIZED at least (_check_thread_level).

Faults: an uncaught exception in one process is announced to the others (a collective waiting
for it fails at once, naming it), then that process aborts the MPI job after a short grace, so
the launcher ends every process; a process that exits while others wait for it is reported by
them; a process that dies or hangs is reported when the collective timeout passes.
"""
import atexit
import functools
import os
import sys
import time

from xjax._src import devices as devices_mod

DEFAULT_TIMEOUT = 300.0  # seconds a process waits in one collective for the others
# Seconds a failed process waits before aborting, so that the others report first: a wait in the
# core goes on for 0.5 s after a notice (kNoticeGraceSeconds, src/core/distributed/mpi.cpp).
_ABORT_GRACE = 2.0
_TIMEOUT_ENV, _CHECK_ENV = "XJAX_COLLECTIVE_TIMEOUT", "XJAX_CHECK_COLLECTIVES"


class DistributedError(RuntimeError):
    """A multi-process run failed: a process raised, died, timed out or ran other collectives.

    `abort` says whether this process must end the MPI job itself (no other process will).
    """

    def __init__(self, message, abort=True):
        super().__init__(message)
        self.abort = abort


DistributedError.__module__ = "xjax.distributed"  # where users find it


class _State:
    # (slots: pmap's C++ call path reads and writes seq, timeout, failed and exited at their offsets)
    __slots__ = ("mpi", "data", "control", "process_index", "process_count", "timeout", "check", "seq", "failed",
                 "notified", "exited")

    def __init__(self):
        self.mpi = None  # the mpi4py.MPI module, once initialized
        self.data = self.control = None  # communicators
        self.process_index, self.process_count = 0, 1
        self.timeout, self.check = DEFAULT_TIMEOUT, True
        self.seq = 0  # cross-process collectives started so far
        self.failed = None  # the DistributedError that broke the run
        self.notified = False  # whether the others were told that this process ends
        self.exited = {}  # process -> the collectives it ran before it exited


state = _State()


def is_initialized():
    """Whether xjax.distributed.initialize() has run (and shutdown() has not)."""
    return state.mpi is not None


def _import_mpi():
    try:
        from mpi4py import MPI  # lazy: mpi4py is optional (xjax[distributed])
    except ImportError as e:
        raise RuntimeError("xjax.distributed.initialize needs mpi4py and an MPI library: "
                           "pip install 'xjax[distributed]' (or mpi4py built against the system's MPI)") from e
    return MPI


def _timeout_setting(value):
    if value is None:
        text = os.environ.get(_TIMEOUT_ENV)
        if not text:
            return DEFAULT_TIMEOUT
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{_TIMEOUT_ENV} must be a number of seconds, got {text!r}") from None
    if not value > 0:
        raise ValueError(f"xjax.distributed.initialize: collective_timeout must be a positive number of seconds, "
                         f"got {value!r}")
    return float(value)


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None, *,
               collective_timeout=None, check_collectives=None):
    """Joins the processes of a multi-process run (started by mpirun or srun), as jax.distributed.initialize.

    The processes, their number and this one's index come from MPI; num_processes and process_id,
    when given, are checked against them, and coordinator_address is not needed (MPI's launcher
    connects the processes). Each process keeps its CPU devices (XJAX_NUM_CPU_DEVICES, the same
    number in every process); xjax.devices() then lists every process's devices.

    collective_timeout (seconds; default XJAX_COLLECTIVE_TIMEOUT or 300): how long a process waits
    in one collective for the others before failing with an error naming the missing processes.
    check_collectives (default on; XJAX_CHECK_COLLECTIVES=0 turns it off): every collective is
    first announced to the others, so that different collectives, shapes or orders across
    processes fail with an error instead of hanging or corrupting data. The all-reduces that pmap
    compiles into one program check in their own messages, at no cost, whatever this says.
    """
    if is_initialized():
        raise RuntimeError("xjax.distributed.initialize should only be called once.")
    if local_device_ids is not None:
        raise NotImplementedError("xjax.distributed.initialize: local_device_ids selects accelerators; xjax's CPU "
                                  "devices are set by XJAX_NUM_CPU_DEVICES")
    timeout = _timeout_setting(collective_timeout)
    if check_collectives is None:
        check_collectives = os.environ.get(_CHECK_ENV, "1") != "0"
    MPI = _import_mpi()
    _check_thread_level(MPI)
    world = MPI.COMM_WORLD
    size, rank = world.Get_size(), world.Get_rank()
    if num_processes is not None and num_processes != size:
        raise ValueError(f"xjax.distributed.initialize: num_processes={num_processes}, but MPI started {size} "
                         f"process(es) (mpirun -np / srun -n set it)")
    if process_id is not None and process_id != rank:
        raise ValueError(f"xjax.distributed.initialize: process_id={process_id}, but MPI gave this process rank {rank}")
    counts = world.allgather(len(devices_mod.cpu_devices()))
    if len(set(counts)) != 1:
        raise ValueError(f"xjax.distributed.initialize: every process needs the same number of CPU devices "
                         f"(XJAX_NUM_CPU_DEVICES); the processes have {counts}")
    state.data, state.control = world.Dup(), world.Dup()
    state.process_index, state.process_count = rank, size
    state.timeout, state.check = timeout, bool(check_collectives)
    state.seq, state.failed, state.notified, state.exited = 0, None, False, {}
    state.mpi = MPI
    devices_mod.set_global_devices(counts, rank)
    if size > 1:
        _install_hooks()
    for join in _on_initialize:
        join()


_THREAD_LEVELS = ("MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE")


def _check_thread_level(MPI):
    """xjax calls MPI from more than the main thread: its compiled programs (the core's all_reduce
    op) call it from the thread that runs them, and the Python collectives from the thread that
    calls pmap. It never makes two calls at once: the calling thread waits for the program, and
    programs holding collectives run one at a time, in program order. MPI_THREAD_SERIALIZED is
    therefore what it needs (MPI_THREAD_MULTIPLE, mpi4py's default request, is more than enough)."""
    provided = MPI.Query_thread()
    if provided >= MPI.THREAD_SERIALIZED:
        return
    levels = {getattr(MPI, name[4:]): name for name in _THREAD_LEVELS}
    raise RuntimeError(
        f"xjax.distributed.initialize: MPI was initialized with thread support {levels.get(provided, provided)}, but "
        f"xjax needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE: its compiled programs call MPI from the thread "
        f"that runs them, not only from the main thread (one call at a time). mpi4py asks for MPI_THREAD_MULTIPLE "
        f"unless mpi4py.rc.thread_level or MPI4PY_RC_THREAD_LEVEL says less: set it to 'serialized' or 'multiple' "
        f"before mpi4py.MPI is imported (an MPI library that provides less cannot run xjax across processes)")


_on_initialize = []  # what the MPI users above (mpi_channel) set up, every process together, at initialize()
_on_shutdown = []  # what the MPI users above (parallel_core) free before the communicators are


def on_initialize(join):
    """Registers join() to run at the end of initialize(), in every process (it may communicate)."""
    _on_initialize.append(join)


def on_shutdown(release):
    """Registers release() to run at shutdown(), before the communicators are freed."""
    _on_shutdown.append(release)


def shutdown():
    """Leaves the multi-process run (as jax.distributed.shutdown): back to one process."""
    if not is_initialized():
        return
    _tell_others("exit", "")
    for release in _on_shutdown:
        release()
    state.data.Free()
    state.control.Free()
    state.mpi = state.data = state.control = None
    state.process_index, state.process_count = 0, 1
    devices_mod.reset_global_devices()


def process_index():
    """This process's index in a multi-process run (0 without one)."""
    return state.process_index


def process_count():
    """The number of processes in the run (1 without xjax.distributed.initialize)."""
    return state.process_count


_LAUNCHER_SIZES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS")


@functools.lru_cache(None)
def launched_processes():
    """How many processes the launcher (mpirun, mpiexec, srun) started, read from its environment."""
    for name in _LAUNCHER_SIZES:
        text = os.environ.get(name, "")
        if text.isdigit():
            return int(text)
    return 1


def check_initialized(api):
    """Raises the error for a cross-process API run before initialize() in a multi-process launch
    (without a launcher, one process is the whole run and such APIs work on it alone)."""
    if not is_initialized() and launched_processes() > 1:
        raise RuntimeError(f"{api} ran in one of {launched_processes()} processes started by mpirun/srun before "
                           f"xjax.distributed.initialize(): call it first, so that the processes work together")


# ---- faults: telling the others, ending the job -------------------------------------------------

# Tags on the control communicator (the checks are collectives there, untagged).
NOTICE_TAG = 2  # a process failed or exits (pickled dict)
ROLL_TAG = 3  # a process whose check timed out asks which collective the others wait in (int64: its own)
ANSWER_TAG = 4  # the answer (int64: the collective this process waits in)
EXCHANGE_TAG = 5  # the core's all-reduce and check messages (src/core/distributed/mpi.h)

# MPI requests that a failed wait left in flight, with their buffers (mpi4py's requests do not keep
# a collective's): kept for the life of the process. Freed, MPI would still write into them
# (collectives cannot be cancelled) when a late process completes the operation. Bounded: a
# process abandons at most one wait per initialize() (no collective runs after a failure:
# state.failed) and its notices once.
abandoned = []


def _tell_others(kind, text):
    """Sends every other process a notice that this one ends (`kind`: "error" or "exit")."""
    if state.notified or state.control is None or state.process_count == 1:
        return
    state.notified = True
    msg = {"kind": kind, "process": state.process_index, "text": text, "seq": state.seq}
    reqs = [state.control.isend(msg, dest=q, tag=NOTICE_TAG)
            for q in range(state.process_count) if q != state.process_index]
    deadline = time.monotonic() + 2.0  # small messages go at once; never hang on the way out
    while not state.mpi.Request.Testall(reqs):
        if time.monotonic() > deadline:
            abandoned.append((reqs, msg))  # (mpi4py's isend requests hold their pickled bytes)
            break
        time.sleep(0.001)


def _abort():
    sys.stderr.flush()
    sys.stdout.flush()
    state.mpi.COMM_WORLD.Abort(1)


_previous_excepthook = None


def _excepthook(kind, value, tb):
    _previous_excepthook(kind, value, tb)
    if not is_initialized():
        return
    if isinstance(value, DistributedError):
        _tell_others("error", f"{kind.__name__}: {value}")
        if value.abort:
            _abort()
        return
    # This process failed first: the others learn it at their next collective, report it, and the
    # abort ends any that are busy elsewhere.
    _tell_others("error", f"{kind.__name__}: {value}")
    time.sleep(_ABORT_GRACE)
    _abort()


def _at_exit():
    if is_initialized():
        _tell_others("exit", "")


_hooks_installed = False


def _install_hooks():
    global _previous_excepthook, _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    _previous_excepthook = sys.excepthook
    sys.excepthook = _excepthook
    atexit.register(_at_exit)  # runs before mpi4py's MPI_Finalize (registered earlier)
