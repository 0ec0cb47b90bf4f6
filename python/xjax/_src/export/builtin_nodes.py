"""xjax's own namedtuples (the optimizer states) registered for export under fixed names, so that a
train step's signature is stored and read back without the user registering them (imported by xjax.export:
a fixed list of xjax modules, never a name read from a file)."""
from xjax._src.export.pytree_spec import register_namedtuple_serialization
from xjax._src.optim import base, factorized, inject, transforms, wrappers


def _is_public_namedtuple(name, obj, module):
    return (isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")
            and obj.__module__ == module.__name__ and not name.startswith("_"))


for _module in (base, factorized, inject, transforms, wrappers):
    for _name, _cls in sorted(vars(_module).items()):
        if _is_public_namedtuple(_name, _cls, _module) and _name == _cls.__name__:  # (not under an alias)
            register_namedtuple_serialization(_cls, serialized_name=f"xjax.optim.{_name}")
