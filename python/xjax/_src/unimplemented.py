"""Modules that exist so that `import` of them succeeds (a library imports them unconditionally) but whose
contents xjax does not implement: every public attribute raises NotImplementedError naming it."""


def missing_attributes(module_name, reason):
    """A module `__getattr__` that raises NotImplementedError for `module_name.X`, saying `reason`."""

    def __getattr__(name):
        if name.startswith("__"):  # importlib and pickle probe dunders; those are plainly absent
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        raise NotImplementedError(f"{module_name}.{name} is not implemented in xjax: {reason}")

    return __getattr__
