"""JAX's per-transformation rule tables (`ad.primitive_jvps[p] = rule`, ...) as views onto the rule
fields of each Primitive, so that a rule has one home whichever way it is registered.

JAX keeps one dict per transformation; xjax keeps every rule on its primitive. A RuleTable maps a
primitive to its rule in JAX's calling convention: setting an entry converts the rule to xjax's
convention and stores it in the primitive's field; reading one gives back the rule as it was
registered, or xjax's own rule converted to JAX's convention.
"""
from collections.abc import MutableMapping

from xjax._src import core


class RuleTable(MutableMapping):
    """The primitives whose `field` is set, each with its rule in JAX's convention.

    to_xjax(rule, primitive) wraps a JAX-convention rule; to_jax(rule, primitive) wraps an xjax one.
    Wrappers remember what they wrap, so a rule read back through its table is the object that was
    registered.
    """

    def __init__(self, name, field, to_xjax, to_jax):
        self.name = name
        self.field = field
        self._to_xjax = to_xjax
        self._to_jax = to_jax

    def __setitem__(self, primitive, rule):
        if not isinstance(primitive, core.Primitive):
            raise TypeError(f"{self.name}: keys are Primitives, got {type(primitive).__name__}")
        wrapped = self._to_xjax(rule, primitive)
        wrapped.registered_as = (self.name, rule)
        setattr(primitive, self.field, wrapped)

    def __getitem__(self, primitive):
        rule = getattr(primitive, self.field, None) if isinstance(primitive, core.Primitive) else None
        if rule is None:
            raise KeyError(primitive)
        table, registered = getattr(rule, "registered_as", (None, None))
        if table == self.name:
            return registered
        return self._to_jax(rule, primitive)

    def __delitem__(self, primitive):
        if self.get(primitive) is None:
            raise KeyError(primitive)
        setattr(primitive, self.field, None)

    def __contains__(self, primitive):
        return isinstance(primitive, core.Primitive) and getattr(primitive, self.field, None) is not None

    def __iter__(self):
        return (p for p in core.all_primitives() if p in self)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"<{self.name}: {len(self)} primitives>"
