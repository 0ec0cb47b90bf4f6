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
    """A CPU device, as JAX's CpuDevice."""

    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    client = None

    def __init__(self, id):  # noqa: A002 - JAX's name
        self.id = id

    @property
    def num_threads(self):
        """The size of this device's share of the thread pool."""
        return _core.device_num_threads(self.id)

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"cpu:{self.id}"


CPU_DEVICE = Device(0)
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
    """The CPU devices (fixing their number on first call)."""
    global _devices
    if _devices is None:
        _core.set_num_devices(_requested())
        _devices = [CPU_DEVICE] + [Device(i) for i in range(1, _core.num_devices())]
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
