"""The CPU devices: the host CPU, split into N devices by jax_num_cpu_devices or XJAX_NUM_CPU_DEVICES.

All devices share the host memory (an xjax.Array lives on the CPU, whichever device computed it);
what a device owns is a share of the cores: the C++ core gives each one its own thread pool and
host thread (src/core/devices.h), on which pmap runs that device's shard. The number is fixed at
the first use of the devices (xjax.devices(), pmap), as JAX fixes it when its backend starts.
"""
import os

from xjax import _core
from xjax._src.config import config

_ENV = "XJAX_NUM_CPU_DEVICES"


class Device:
    """A device (jax.Device): what xjax's CPU and GPU devices are instances of."""


class CpuDevice(Device):
    """A CPU device, as JAX's CpuDevice.

    `id` is global (unique over all processes of a distributed run); `local_hardware_id` is the
    device's index among its own process's devices (the C++ core's device number), None for a
    device of another process.
    """

    platform = "cpu"
    device_kind = "cpu"
    client = None

    def __init__(self, id, process_index=0, local_hardware_id=None):  # noqa: A002 - JAX's name
        self.id = id
        self.process_index = process_index
        self.local_hardware_id = local_hardware_id

    @property
    def num_threads(self):
        """The size of this device's share of the thread pool."""
        if self.local_hardware_id is None:
            raise ValueError(f"{self!r} belongs to process {self.process_index}; its threads are not ours")
        return _core.device_num_threads(self.local_hardware_id)

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"cpu:{self.id}"


CPU_DEVICE = CpuDevice(0, 0, 0)
_devices = None  # the list, once the devices are in use


def _requested(value=None):
    """The number of devices asked for: the config option if set, else the environment, else 1."""
    n = config.read("jax_num_cpu_devices") if value is None else value
    if n == -1:
        text = os.environ.get(_ENV)
        if not text:
            return 1
        try:
            n = int(text)
        except ValueError:
            raise ValueError(f"{_ENV} must be a positive integer, got {text!r}") from None
        if n < 1:
            raise ValueError(f"{_ENV} must be a positive integer, got {text!r}")
        return n
    if n < 1:
        raise ValueError(f"jax_num_cpu_devices must be a positive integer (or -1: the default), got {n}")
    return n


def cpu_devices():
    """This process's CPU devices (fixing their number on first call)."""
    global _devices
    if _devices is None:
        _core.set_num_devices(_requested())
        _devices = [CPU_DEVICE] + [CpuDevice(i, 0, i) for i in range(1, _core.num_devices())]
    return _devices


def _check_update(name, value):
    if name != "jax_num_cpu_devices" or value is None:
        return
    n = _requested(value)
    if _devices is not None and n != len(_devices):
        raise RuntimeError("jax_num_cpu_devices config should be updated before backends are initialized i.e. before "
                           "any JAX operation is executed. You should initialize this config immediately after "
                           "`import jax`.")


config.add_validator(_check_update)


_global_devices = None  # every process's devices, set by xjax.distributed.initialize


def set_global_devices(counts, process_index):
    """Numbers the devices of a distributed run: process p's devices take the global ids after those
    of processes 0 .. p-1 (counts[p] devices each); returns the global list."""
    global _global_devices
    local = cpu_devices()
    out = []
    for p, count in enumerate(counts):
        for i in range(count):
            if p == process_index:
                d = local[i]
                d.id, d.process_index = len(out), p
            else:
                d = CpuDevice(len(out), p, None)
            out.append(d)
    _global_devices = out
    _core.fast_call.invalidate()  # (pmap's C++ call path keeps plans made for the old devices)
    return out


def reset_global_devices():
    """Back to one process (xjax.distributed.shutdown): the local devices take ids 0 .. n-1 again."""
    global _global_devices
    _global_devices = None
    _core.fast_call.invalidate()
    for i, d in enumerate(_devices or []):
        d.id, d.process_index = i, 0


def global_devices():
    """Every process's devices in a distributed run, else this process's."""
    return _global_devices if _global_devices is not None else cpu_devices()
