"""xjax.experimental.hijax (jax.experimental.hijax): JAX's extension point for high-level types,
values made of arrays that primitives may update in place. xjax does not implement them yet.

The base classes and registration functions exist so that libraries that define such types (Flax
NNX's opt-in hijax Variables) import; a HiPrimitive's bind raises NotImplementedError, and values
of a registered type are not arrays to xjax's transformations.
"""


def _missing(what):
    raise NotImplementedError(f"jax.experimental.hijax: {what} is not implemented in xjax yet")


class HiPrimitive:
    """A primitive over high-level types."""

    def __init__(self, name):
        self.name = name

    def bind(self, *args, **params):
        _missing(f"binding the HiPrimitive '{self.name}'")

    def __repr__(self):
        return self.name


class HiType:
    """The abstract value of a high-level type."""

    __slots__ = ()


class MutableHiType(HiType):
    """The abstract value of a high-level type whose values may be updated in place."""

    __slots__ = ()


_hitypes = {}  # value type -> its abstract value function, as registered


def register_hitype(cls, to_aval):
    """Records `cls` as a high-level type whose abstract values `to_aval` gives."""
    _hitypes[cls] = to_aval


class aval_method:
    """A method of a high-level type's abstract value, callable on traced values of the type."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, instance, owner=None):
        _missing(f"calling aval_method {self.fun.__name__!r}")


class aval_property(property):
    """A property of a high-level type's abstract value, read on traced values of the type."""

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        _missing(f"reading aval_property {self.fget.__name__!r}")


class _EffectTypeSet:
    """The effect types a control-flow body may have."""

    def __init__(self):
        self._types = set()

    def add_type(self, effect_type):
        self._types.add(effect_type)

    def contains(self, effect):
        return any(isinstance(effect, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()
