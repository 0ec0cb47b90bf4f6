"""Global configuration flags (`xjax.config.update("jax_enable_x64", True)`), as JAX names them.

xjax acts on jax_enable_x64, jax_disable_jit, jax_log_compiles, jax_num_cpu_devices and the
platform flags (jax_platforms, jax_platform_name, jax_default_device: see _src/platforms.py). The other
flags are JAX's names for things xjax has no counterpart of (XLA caches, PRNG and traceback
settings...): they are accepted and stored, so that programs which set them at start run. A few
would change results in JAX (NaN checks, strict promotion): setting those to anything but their
default warns that xjax ignores them.
"""
import contextlib
import itertools
import os
import sys
import warnings

_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F8_ANY_F8_F32",
               "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
               "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
               "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
_GUARD = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_ERROR_CHECK = ("ignore", "raise")

# name: (default, type or tuple of allowed values), defaults as in JAX 0.10.
_FLAGS = {
    # Flags xjax acts on.
    "jax_enable_x64": (False, bool),
    "jax_disable_jit": (False, bool),
    "jax_log_compiles": (False, bool),
    "jax_num_cpu_devices": (-1, int),  # xjax._src.devices
    "jax_platforms": (None, str),  # xjax._src.platforms (also read from XJAX_PLATFORMS)
    "jax_platform_name": ("", str),
    "jax_default_device": (None, object),
    # Flags that change results in JAX and that xjax does not implement yet (setting them warns).
    "jax_debug_nans": (False, bool),
    "jax_debug_infs": (False, bool),
    "jax_numpy_rank_promotion": ("allow", ("allow", "warn", "raise")),
    "jax_numpy_dtype_promotion": ("standard", ("standard", "strict")),
    "jax_error_checking_behavior_nan": ("ignore", _ERROR_CHECK),
    "jax_error_checking_behavior_divide": ("ignore", _ERROR_CHECK),
    "jax_error_checking_behavior_oob": ("ignore", _ERROR_CHECK),
    # Flags with no counterpart in xjax, accepted and stored.
    "jax_default_matmul_precision": (None, _PRECISIONS),  # the CPU computes at full precision anyway
    "jax_cpu_enable_async_dispatch": (True, bool),
    "jax_compilation_cache_dir": (None, str),
    "jax_enable_compilation_cache": (True, bool),
    "jax_compilation_cache_max_size": (-1, int),
    "jax_persistent_cache_min_compile_time_secs": (1.0, float),
    "jax_persistent_cache_min_entry_size_bytes": (0, int),
    "jax_raise_persistent_cache_errors": (False, bool),
    "jax_explain_cache_misses": (False, bool),
    "jax_enable_checks": (False, bool),
    "jax_check_tracer_leaks": (False, bool),
    "jax_check_static_indices": (False, bool),
    "jax_traceback_filtering": ("auto", ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")),
    "jax_traceback_in_locations_limit": (100, int),
    "jax_include_full_tracebacks_in_locations": (True, bool),
    "jax_transfer_guard": (None, _GUARD),
    "jax_transfer_guard_host_to_device": ("allow", _GUARD),
    "jax_transfer_guard_device_to_host": ("allow", _GUARD),
    "jax_transfer_guard_device_to_device": ("allow", _GUARD),
    "jax_logging_level": ("NOTSET", ("NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
    "jax_debug_log_modules": ("", str),
    "jax_dump_ir_to": ("", str),
    "jax_pprint_use_color": (True, bool),
    "jax_use_shardy_partitioner": (True, bool),
    "jax_optimization_level": ("UNKNOWN", ("UNKNOWN", "O0", "O1", "O2", "O3")),
    "jax_memory_fitting_level": ("O2", ("UNKNOWN", "O0", "O1", "O2", "O3")),
    "jax_allow_f16_reductions": (True, bool),
    "jax_captured_constants_warn_bytes": (2000000000, int),
    "jax_threefry_partitionable": (True, bool),
    "jax_default_prng_impl": ("threefry2x32", ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32",
                                               "philox4x32")),
    "jax_enable_custom_prng": (False, bool),
    "jax_legacy_prng_key": ("allow", ("allow", "warn", "error")),
    "jax_debug_key_reuse": (False, bool),
    "jax_random_seed_offset": (0, int),
    "jax_use_high_dynamic_range_gumbel": (False, bool),
    "jax_softmax_custom_jvp": (False, bool),
}
_UNIMPLEMENTED = ("jax_debug_nans", "jax_debug_infs", "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion",
                  "jax_error_checking_behavior_nan", "jax_error_checking_behavior_divide",
                  "jax_error_checking_behavior_oob")
_TRUE_WORDS = ("1", "true", "t", "yes", "y", "on")


def _parse_text(name, text):
    """A flag's value from command-line or environment text."""
    kind = _FLAGS[name][1]
    if kind is bool:
        return text.lower() in _TRUE_WORDS
    if kind in (int, float):
        return kind(text)
    return text


def _checked(name, value):
    """value as flag `name` stores it, or the ValueError JAX raises for it."""
    default, kind = _FLAGS[name]
    if kind is bool:
        return bool(value)
    if kind is object or value is None:
        return value
    if isinstance(kind, tuple):
        if value not in kind:
            none = "None or " if default is None else ""
            raise ValueError(f"new enum value must be {none}in {list(kind)}, got {value} of type {type(value)}.")
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        word = "string" if kind is str else kind.__name__
        raise ValueError(f"new {word} config value must be None or of type {kind.__name__}, got {value} of type "
                         f"{type(value)}.")
    return value


class Config:
    """Holds the flags; `update` validates names and values so that typos fail loudly."""

    def __init__(self):
        self._values = {}
        for name, (default, _) in _FLAGS.items():
            text = os.environ.get(name.upper())
            self._values[name] = default if text is None else _checked(name, _parse_text(name, text))
        self._listeners = []
        self._validators = []
        self.use_absl = False
        self._parsed_argv = False

    def update(self, name, value):
        """Sets a flag, e.g. `config.update("jax_enable_x64", True)`."""
        if name not in _FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")
        value = _checked(name, value)
        for check in self._validators:
            check(name, value)
        if name in _UNIMPLEMENTED and value != _FLAGS[name][0]:
            warnings.warn(f"xjax does not implement {name}={value!r} yet; the setting has no effect.", stacklevel=2)
        self._values[name] = value
        for listener in self._listeners:
            listener(name, value)

    def read(self, name):
        """The value of a flag."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values[name]

    @property
    def values(self):
        """All flags and their values, as a new dict."""
        return dict(self._values)

    @property
    def x64_enabled(self):
        return self._values["jax_enable_x64"]

    def __getattr__(self, name):
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"'Config' object has no attribute '{name}'")

    def add_validator(self, check):
        """Registers check(name, value), called before each update; it raises to refuse the value."""
        self._validators.append(check)

    def on_change(self, listener):
        """Registers listener(name, value), called after each update (caches that depend on flags)."""
        self._listeners.append(listener)

    def config_with_absl(self):
        """Registers the flags with absl, so that `app.run(main)` accepts --jax_... options and applies
        them once it has parsed the command line (needs absl, as in JAX)."""
        from absl import app, flags  # lazy: absl is optional (only absl programs call this)

        self.use_absl = True
        for name, (default, kind) in _FLAGS.items():
            if name in flags.FLAGS:
                continue
            value, helptext = self._values[name], f"JAX's {name} (see xjax.config)."
            if kind is bool:
                flags.DEFINE_bool(name, value, helptext)
            elif kind is int:
                flags.DEFINE_integer(name, value, helptext)
            elif kind is float:
                flags.DEFINE_float(name, value, helptext)
            elif isinstance(kind, tuple):
                flags.DEFINE_enum(name, value, list(kind), helptext)
            else:
                flags.DEFINE_string(name, None if value is None else str(value), helptext)
        app.call_after_init(lambda: self._apply_absl_flags(flags.FLAGS))

    def _apply_absl_flags(self, absl_flags):
        for name in _FLAGS:
            if name in absl_flags and absl_flags[name].present:
                self.update(name, absl_flags[name].value)

    def parse_flags_with_absl(self):
        """Applies the --jax_... options of sys.argv (before a `--`): `--jax_enable_x64`,
        `--nojax_enable_x64`, `--jax_platforms=cpu`. Unknown names are left alone; runs once."""
        if self._parsed_argv:
            return
        self._parsed_argv = True
        for arg in itertools.takewhile(lambda a: a != "--", sys.argv[1:]):
            if not arg.startswith("--"):
                continue
            name, eq, text = arg[2:].partition("=")
            if name in _FLAGS:
                self.update(name, _parse_text(name, text) if eq else True)
            elif name.startswith("no") and not eq and _FLAGS.get(name[2:], (None, None))[1] is bool:
                self.update(name[2:], False)


config = Config()


_NO_VALUE = object()


class _FlagContext:
    """A flag as JAX's top-level context managers have it: `with xjax.enable_x64(): ...` sets the flag
    for the block (True for boolean flags when no value is given); `.value` reads it."""

    def __init__(self, name):
        self.name = name

    @property
    def value(self):
        return config.read(self.name)

    @contextlib.contextmanager
    def __call__(self, new_val=_NO_VALUE):
        if new_val is _NO_VALUE:
            if _FLAGS[self.name][1] is not bool:
                raise TypeError(f"Context manager for {self.name[4:]} config option requires an argument "
                                "representing the new value for the config option.")
            new_val = True
        old = config.read(self.name)
        config.update(self.name, new_val)
        try:
            yield
        finally:
            config.update(self.name, old)


enable_x64 = _FlagContext("jax_enable_x64")
log_compiles = _FlagContext("jax_log_compiles")
debug_nans = _FlagContext("jax_debug_nans")
debug_infs = _FlagContext("jax_debug_infs")
default_matmul_precision = _FlagContext("jax_default_matmul_precision")
numpy_rank_promotion = _FlagContext("jax_numpy_rank_promotion")
numpy_dtype_promotion = _FlagContext("jax_numpy_dtype_promotion")
enable_checks = _FlagContext("jax_enable_checks")
check_tracer_leaks = _FlagContext("jax_check_tracer_leaks")
default_device = _FlagContext("jax_default_device")  # `with xjax.default_device(device):` (see platforms)


def disable_jit(disable=True):
    """A context manager running jitted functions op by op inside the block (jax.disable_jit)."""
    return _FlagContext("jax_disable_jit")(disable)
