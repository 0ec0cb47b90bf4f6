"""The backends xjax runs on -- the CPU always, CUDA where CuPy sees a GPU -- chosen as JAX chooses.

JAX_PLATFORMS (or `config.update("jax_platforms", ...)`, or XJAX_PLATFORMS) lists the platforms
to start, the first being the default, and a listed one that fails to start is an error. Unset,
every platform that starts is used and the GPU is the default. The backends start at the first
question about devices (xjax.devices(), default_backend(), device_put) and stay fixed after it,
as JAX's do; a later change of jax_platforms has no effect, as in JAX.

Nothing of CuPy is imported unless a GPU device file is visible (JAX's own test, see
_nvidia_gpu_visible), and a missing CuPy or driver is never reported unless CUDA was asked for.
"""
import os

from xjax._src import devices
from xjax._src.config import config

_ENV = "XJAX_PLATFORMS"  # read when jax_platforms (JAX_PLATFORMS) is unset
_ALIASES = {"gpu": "cuda"}  # JAX's alias: 'gpu' means whichever GPU platform is present
_AUTO_ORDER = ("cuda", "cpu")
# JAX's check before it tries CUDA at all: a device file of the NVIDIA driver (Docker, WSL2 included).
_NVIDIA_DEVICE_FILES = ("/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg")
_HINT_EXPLICIT = " (set JAX_PLATFORMS='' to automatically choose an available backend)"

class Backend:
    """One started platform: its name as JAX_PLATFORMS spells it ("cpu", "cuda"), its `platform`
    as devices report it ("cpu", "gpu"), and its devices."""

    def __init__(self, name, platform, local_devices, all_devices=None):
        self.name = name
        self.platform = platform
        self._local = local_devices  # () -> this process's devices
        self._all = all_devices or local_devices  # () -> every process's devices

    def devices(self):
        return list(self._all())

    def local_devices(self):
        return list(self._local())

    def __repr__(self):
        return f"Backend({self.name!r})"


def _start_cpu():
    return Backend("cpu", "cpu", devices.cpu_devices, devices.global_devices)


_FACTORIES = {"cpu": _start_cpu}  # name -> () -> Backend; the GPU runtime adds "cuda" (plug_in_gpu)


class GpuComputeError(NotImplementedError):
    """Raised when a GPU array reaches the CPU runtime (jit and primitives catch it and run on the GPU),
    or when host operands belong on the default GPU (`device`: see xjax._src.placement)."""

    def __init__(self, message, device=None):
        super().__init__(message)
        self.device = device


# The GPU runtime (xjax._src.gpu), a leaf that nothing below imports: the CPU paths reach it only
# through this object, which it installs when xjax is imported (plug_in_gpu). Its entries are
# called only with a GPU array or device in hand, so they never load CuPy on a machine without one.
gpu = None


def plug_in_gpu(runtime, start_backend):
    """Installs the GPU runtime's entry points (`gpu`) and its backend factory, started as "cuda"."""
    global gpu
    gpu = runtime
    _FACTORIES["cuda"] = start_backend


def check_gpu_visible():
    """Raises the error that skips CUDA quietly when no NVIDIA GPU is visible (JAX's own test)."""
    if not _nvidia_gpu_visible():
        raise _NotVisible("no NVIDIA GPU is visible (none of " + ", ".join(_NVIDIA_DEVICE_FILES) + " exists)")


class _NotVisible(RuntimeError):
    """CUDA was not tried: no GPU on this machine (JAX then skips CUDA even where it was asked for)."""


def _nvidia_gpu_visible():
    return any(os.path.exists(path) for path in _NVIDIA_DEVICE_FILES)


_backends = None  # name -> Backend, in order of priority, once started
_errors = {}  # name -> why it failed to start (platforms tried quietly; not those skipped for want of a GPU)
_default = None  # the default Backend


def requested_platforms():
    """The platforms asked for (jax_platforms / JAX_PLATFORMS, else XJAX_PLATFORMS), or None: any."""
    text = config.read("jax_platforms")
    if text is None:
        text = os.environ.get(_ENV)
    if not text:
        return None
    names = []
    for name in text.split(","):
        name = _ALIASES.get(name, name)
        if name not in names:
            names.append(name)
    return names


def _start(name):
    factory = _FACTORIES.get(name)
    if factory is None:
        raise RuntimeError(f"Backend '{name}' is not in the list of known backends: {list(_FACTORIES)}.")
    return factory()


def backends():
    """The started backends, name -> Backend (starting them on first call)."""
    global _backends, _default
    if _backends is not None:
        return _backends
    asked = requested_platforms()
    started, skipped = {}, {}
    for name in asked or _AUTO_ORDER:
        try:
            started[name] = _start(name)
        except _NotVisible as err:
            skipped[name] = str(err)  # as JAX: no GPU on the machine skips CUDA, even when asked for
        except Exception as err:
            if asked:
                raise RuntimeError(f"Unable to initialize backend '{name}': {err}{_HINT_EXPLICIT}") from err
            skipped[name] = str(err)
            _errors[name] = str(err)  # said when the backend is asked for by name
    if not started:  # (JAX fails an assertion here)
        name, why = next(iter(skipped.items()))
        raise RuntimeError(f"Unable to initialize backend '{name}': {why}{_HINT_EXPLICIT}")
    _backends, _default = started, started[next(iter(started))]  # the first listed, or the GPU when unasked
    _forget_placement()
    return _backends


# Where new arrays, and computations whose operands are all host data, go (JAX places them on the
# default device): a GpuDevice when the default device is a GPU, else None (the CPU). _UNSET until
# first asked; a machine with no GPU device file settles on None without fixing the platforms.
_UNSET = object()
_placement = _UNSET


def placement():
    """The GPU that new arrays go to (the default device, when it is a GPU), or None for the CPU."""
    p = _placement
    return _find_placement() if p is _UNSET else p


def _find_placement():
    global _placement
    if _backends is None and not _nvidia_gpu_visible():
        _placement = None
        return None
    backends()
    device = default_device()
    _placement = device if getattr(device, "platform", None) == "gpu" else None
    return _placement


def _forget_placement(name="jax_default_device", value=None):
    global _placement
    if name in ("jax_default_device", "jax_platform_name"):
        _placement = _UNSET


config.on_change(_forget_placement)


def get_backend(platform=None):
    """The Backend for a name ("cpu", "gpu", "cuda") or the default one, with JAX's errors."""
    bs = backends()
    if platform is None:
        platform = config.read("jax_platform_name") or None
    if platform is None:
        return _default
    if isinstance(platform, Backend):
        return platform
    if not isinstance(platform, str):
        raise TypeError(f"backend must be None or a platform name such as 'cpu' or 'gpu', got {platform!r}")
    if platform in _ALIASES:
        if _ALIASES[platform] not in bs:
            raise RuntimeError(f"Unknown backend: '{platform}' requested, but no platforms that are instances of "
                               f"{platform} are present. Platforms present are: " + ",".join(bs))
        platform = _ALIASES[platform]
    backend = bs.get(platform)
    if backend is None:
        if platform in _errors:
            raise RuntimeError(f"Backend '{platform}' failed to initialize: {_errors[platform]}. "
                               f"Available backends are {list(bs)}")
        raise RuntimeError(f"Unknown backend {platform}. Available backends are {list(bs)}")
    return backend


def default_device():
    """Where device_put puts new data by default: jax_default_device (a device or a platform name) if
    set, else the default backend's first device."""
    chosen = config.read("jax_default_device")
    if chosen is None:
        return get_backend().local_devices()[0]
    if isinstance(chosen, str):
        return get_backend(chosen).local_devices()[0]
    return chosen
