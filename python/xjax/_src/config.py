"""Global configuration flags (`xjax.config.update("jax_enable_x64", True)`), as JAX names them."""
import os


def _env_flag(name, default):
    value = os.environ.get(name.upper())
    if value is None:
        return default
    return value.lower() in ("1", "true", "yes", "on")


class Config:
    """Holds the flags; `update` validates names so that typos fail loudly."""

    _defaults = {
        "jax_enable_x64": False,
        "jax_log_compiles": False,
        "jax_disable_jit": False,
        "jax_numpy_rank_promotion": "allow",
        "jax_default_matmul_precision": None,
        "jax_platforms": None,
        "jax_platform_name": None,
        "jax_debug_nans": False,
    }

    def __init__(self):
        self._values = {k: _env_flag(k, v) if isinstance(v, bool) else v for k, v in self._defaults.items()}
        self._listeners = []

    def update(self, name, value):
        """Sets a flag, e.g. `config.update("jax_enable_x64", True)`."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        self._values[name] = value
        for listener in self._listeners:
            listener(name, value)

    def read(self, name):
        return self._values[name]

    def __getattr__(self, name):
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"Unrecognized config option: {name}")

    def on_change(self, listener):
        """Registers listener(name, value), called after each update (caches that depend on flags)."""
        self._listeners.append(listener)


config = Config()
