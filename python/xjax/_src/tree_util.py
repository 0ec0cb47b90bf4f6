"""Pytrees: nested tuples, lists, dicts, None and registered classes with leaves at the ends.

The flatten/unflatten walks and PyTreeDef are C++ (xjax._core.pytree); this module holds the
registration API, the key classes, Partial and the functions built on those walks. The
semantics are JAX's: None is a node without children, dicts flatten in sorted key order,
namedtuples, OrderedDicts and defaultdicts are nodes, any other unregistered object is a leaf.
"""
import collections
import dataclasses
import difflib
import functools
import operator
import textwrap
from typing import Any, TypeVar

from xjax._core import pytree as _pytree

PyTreeDef = _pytree.PyTreeDef
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple  # a tuple of key entries


# --- Key path entries -------------------------------------------------------------------------

class _Key:
    """Base of the key classes: frozen, compared and hashed by class and value."""
    __slots__ = ()
    _field = ""

    def __init__(self, *args, **kwargs):  # SequenceKey(0) or SequenceKey(idx=0), as JAX's
        if len(args) + len(kwargs) != 1 or (kwargs and self._field not in kwargs):
            raise TypeError(f"{type(self).__name__}() takes one argument, {self._field}")
        object.__setattr__(self, self._field, args[0] if args else kwargs[self._field])

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        return type(other) is type(self) and other._value() == self._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def __reduce__(self):
        return type(self), (self._value(),)


class SequenceKey(_Key):
    """Index of a tuple or list element: prints as [0]."""
    __slots__ = ("idx",)
    __match_args__ = ("idx",)
    _field = "idx"

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_Key):
    """Key of a dict entry: prints as ['name']."""
    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_Key):
    """Attribute of a namedtuple or dataclass: prints as .name."""
    __slots__ = ("name",)
    __match_args__ = ("name",)
    _field = "name"

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_Key):
    """Position among the children of a custom node registered without keys."""
    __slots__ = ("key",)
    __match_args__ = ("key",)
    _field = "key"

    def __str__(self):
        return f"[<flat index {self.key}>]"


_pytree.set_key_types(SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)


def keystr(keys, *, simple=False, separator=""):
    """Joins a key path into a string: "['a'][0].x", or "a/0/x" with simple=True, separator="/"."""
    if simple:
        return separator.join(str(k._value()) if isinstance(k, _Key) else str(k) for k in keys)
    return separator.join(map(str, keys))


# --- Flattening -------------------------------------------------------------------------------

# The hot entry points are the C++ functions themselves (no Python frame per call).
tree_flatten = _pytree.flatten  # (tree, is_leaf=None) -> (leaves, treedef)
tree_leaves = _pytree.leaves  # (tree, is_leaf=None) -> leaves
tree_structure = _pytree.structure  # (tree, is_leaf=None) -> treedef


def tree_unflatten(treedef, leaves):
    """The pytree with structure `treedef` and these leaves."""
    return treedef.unflatten(leaves)


def _path_predicate(is_leaf, is_leaf_takes_path):
    if is_leaf is None or is_leaf_takes_path:
        return is_leaf
    return lambda _, x: is_leaf(x)


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """([(key path, leaf), ...], treedef)."""
    return _pytree.flatten_with_path(tree, _path_predicate(is_leaf, is_leaf_takes_path))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def _flatten_rest(name, tree, treedef, rest, is_leaf):
    """Leaves of every tree in `rest` cut at the leaves of `treedef` (the structure of `tree`)."""
    out = []
    for i, other in enumerate(rest):
        try:
            out.append(treedef.flatten_up_to(other))
        except ValueError as e:
            raise _mismatch_error(name, tree, other, is_leaf, f"rest[{i}]", str(e)) from None
    return out


def tree_map(f, tree, *rest, is_leaf=None):
    """f applied leafwise; the trees in `rest` have tree's structure, or deeper subtrees at its leaves."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = _flatten_rest("tree_map tree", tree, treedef, rest, is_leaf)
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """tree_map where f also gets the key path of each leaf as first argument."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    plain_is_leaf = None if is_leaf_takes_path else is_leaf  # the mismatch report calls is_leaf(x)
    others = _flatten_rest("tree_map_with_path tree", tree, treedef, rest, plain_is_leaf)
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def tree_reduce(function, tree, initializer=_MISSING, is_leaf=None):
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_MISSING, is_leaf=None):
    """Reduces the leaves pairwise as a balanced tree (operation must be associative)."""
    values = tree_leaves(tree, is_leaf)
    if not values:
        if identity is _MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _reduce_halves(operation, values)


def _reduce_halves(operation, values):
    if len(values) == 1:
        return values[0]
    mid = len(values) // 2
    return operation(_reduce_halves(operation, values[:mid]), _reduce_halves(operation, values[mid:]))


def tree_all(tree, *, is_leaf=None):
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns an outer-of-inner pytree into an inner-of-outer one."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_inner, n_outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_inner * n_outer:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    groups = [flat[i * n_inner:(i + 1) * n_inner] for i in range(n_outer)]
    columns = [outer_treedef.unflatten([g[j] for g in groups]) for j in range(n_inner)]
    return inner_treedef.unflatten(columns)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """full_tree's structure with each leaf of prefix_tree repeated over its subtree."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    (subtrees,) = _flatten_rest("broadcast_prefix prefix_tree", prefix_tree, prefix_def, [full_tree], is_leaf)
    out = []
    for leaf, sub in zip(prefix_leaves, subtrees):
        out.extend([leaf] * tree_structure(sub).num_leaves)
    return tree_structure(full_tree).unflatten(out)


def all_leaves(iterable, is_leaf=None):
    """True when no element of `iterable` is a pytree node."""
    if is_leaf is None:
        return _pytree.all_leaves(iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ):
    """True for registered node types, the built-in ones and namedtuple types."""
    return _pytree.is_node(typ)


def flatten_one_level(tree):
    """(children, node data) of one node."""
    out = _pytree.flatten_one_level(tree, False)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree):
    """(((key, child), ...), node data) of one node."""
    out = _pytree.flatten_one_level(tree, True)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def treedef_tuple(treedefs):
    return _pytree.treedef_tuple(list(treedefs))


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    return treedef.num_nodes == 1


# --- Structure mismatch messages --------------------------------------------------------------

def _is_strict_leaf(x, is_leaf):
    d = tree_structure(x, is_leaf)
    return d.num_nodes == 1 and d.num_leaves == 1


def _key_label(k):
    return str(k._value()) if isinstance(k, _Key) else str(k)


def _where_not_prefix(path, prefix, full, is_leaf):
    """(path, message maker) for the first place where `prefix` is not a prefix of `full`, or None."""
    if _is_strict_leaf(prefix, is_leaf):
        return None
    where = lambda name: f"    {name}{keystr(path)}\n"
    if type(prefix) is not type(full):
        return lambda name: (
            f"pytree structure error: different types at key path\n{where(name)}"
            f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
            f"but at the same key path the full pytree has a subtree of different type\n    {type(full)}.")
    p_items, p_meta = flatten_one_level_with_keys(prefix)
    f_items, f_meta = flatten_one_level_with_keys(full)
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        kind = type(prefix).__name__
        return lambda name: (
            f"pytree structure error: different lengths of {kind} at key path\n{where(name)}"
            f"At that key path, the prefix pytree {name} has a subtree of type {kind} of length "
            f"{len(prefix)}, but the full pytree has a subtree of the same type but of length {len(full)}.")
    p_keys = [k for k, _ in p_items]
    f_keys = [k for k, _ in f_items]
    if len(p_keys) != len(f_keys):
        try:
            diff = "\nso the symmetric difference on key sets is\n    " + " ".join(
                sorted(_key_label(k) for k in set(p_keys).symmetric_difference(f_keys)))
        except TypeError:
            diff = ""
        return lambda name: (
            f"pytree structure error: different numbers of pytree children at key path\n{where(name)}"
            f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
            f"with {len(p_keys)} child keys\n    {' '.join(map(_key_label, p_keys))}\n"
            f"but at the same key path the full pytree has a subtree of the same type but with "
            f"{len(f_keys)} child keys\n    {' '.join(map(_key_label, f_keys))}{diff}")
    try:
        same_meta = bool(p_meta == f_meta)
    except Exception:  # metadata without a usable ==: report it as different
        same_meta = False
    if not same_meta:
        p_str, f_str = str(p_meta), str(f_meta)
        diff = textwrap.indent("\n".join(difflib.ndiff(p_str.splitlines(), f_str.splitlines())), "    ")
        return lambda name: (
            f"pytree structure error: different pytree metadata at key path\n{where(name)}"
            f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
            f"with metadata\n    {p_str}\n"
            f"but at the same key path the full pytree has a subtree of the same type but with metadata\n"
            f"    {f_str}\nso the diff in the metadata at these pytree nodes is\n{diff}")
    for (k, p), (_, f) in zip(p_items, f_items):
        found = _where_not_prefix((*path, k), p, f, is_leaf)
        if found is not None:
            return found
    return None


def where_not_prefix(prefix, full, is_leaf=None):
    """A message maker (taking the prefix's name) for where `prefix` is not a prefix of `full`, or None."""
    return _where_not_prefix((), prefix, full, is_leaf)


def _mismatch_error(name, tree, other, is_leaf, other_name, fallback):
    """ValueError naming the key path of the first difference and both structures."""
    try:
        make = _where_not_prefix((), tree, other, is_leaf)
        message = make(name) if make is not None else fallback
    except Exception:  # the diagnosis walks user code: never hide the original error behind it
        message = fallback
    return ValueError(f"{message}\nThe structures:\n    {name}: {_structure_str(tree, is_leaf)}\n"
                      f"    {other_name}: {_structure_str(other, None)}")


def _structure_str(tree, is_leaf):
    try:
        return str(tree_structure(tree, is_leaf))
    except Exception as e:  # e.g. a dict whose keys do not sort
        return f"<not a valid pytree: {type(e).__name__}: {e}>"


# --- Registration -----------------------------------------------------------------------------

_unflatten_funcs = {}  # node type -> the unflatten function it was registered with


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Makes `nodetype` a pytree node: flatten_func(x) -> (children, aux_data) with hashable
    aux_data, unflatten_func(aux_data, children) -> x. Registering a type twice raises ValueError."""
    _pytree.register_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)
    _unflatten_funcs[nodetype] = unflatten_func


def registered_unflatten(nodetype):
    """The unflatten function nodetype was registered with by register_pytree_node (or its
    variants), or None (export's serialization registry rebuilds nodes with it)."""
    return _unflatten_funcs.get(nodetype)


def register_pytree_node_class(cls):
    """Class decorator: registers cls with its tree_flatten method and tree_unflatten classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Like register_pytree_node, with flatten_with_keys(x) -> (((key, child), ...), aux_data)."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    """Class decorator: tree_flatten_with_keys (and optional tree_flatten) methods, tree_unflatten."""
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a class whose children are the attributes `data_fields` and whose aux data are
    the attributes `meta_fields`; unflattening calls nodetype(**fields). For a dataclass the
    lists may be left out: fields with metadata static=True are meta fields, the others data."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified"
                            f" when either is specified. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got {nodetype=}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            msg = "data_fields and meta_fields must include all dataclass fields with ``init=True`` and only them."
            if init_fields - given:
                msg += f" Missing fields: {init_fields - given}. Add them to drop_fields to suppress this error."
            if given - init_fields:
                msg += f" Unexpected fields: {given - init_fields}."
            raise ValueError(msg)
    if set(data_fields) & set(meta_fields):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: "
                         f"{set(data_fields) & set(meta_fields)}.")
    _pytree.register_dataclass(nodetype, data_fields, meta_fields)
    return nodetype


def register_static(cls):
    """Registers cls as a node without children: instances live in the treedef (hashable)."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def static(**kwargs):
    """dataclasses.field(...) marked static=True for register_dataclass."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


register_pytree_with_keys(
    collections.OrderedDict,
    lambda d: (tuple((DictKey(k), v) for k, v in d.items()), tuple(d)),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda d: (list(d.values()), tuple(d)),
)


def _defaultdict_keys(d):
    keys = tuple(sorted(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _defaultdict_flatten(d):
    keys = tuple(sorted(d))
    return [d[k] for k in keys], (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict,
    _defaultdict_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _defaultdict_flatten,
)


# --- Partial ----------------------------------------------------------------------------------

class _Opaque:
    """Wraps a functools.partial given to Partial, so that Partial does not merge its arguments
    (they stay in the treedef, not among the leaves). Calls, compares and hashes as the wrapped."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __eq__(self, other):
        return self.fn == (other.fn if isinstance(other, _Opaque) else other)

    def __hash__(self):
        return hash(self.fn)

    def __repr__(self):
        return repr(self.fn)


class Partial(functools.partial):
    """functools.partial as a pytree: the bound arguments are children (leaves to transformations),
    the function is aux data. Partial(f, *args, **kwargs)."""

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial):
            func = _Opaque(func)
        return super().__new__(cls, func, *args, **kwargs)


def _partial_func(p):
    return p.func.fn if isinstance(p.func, _Opaque) else p.func


for _cls in (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey, Partial):
    _cls.__module__ = "xjax.tree_util"

register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), _partial_func(p)),
    lambda func, children: Partial(func, *children[0], **children[1]),
)


class _NodeTypes:
    """The pytree node types, for `type(x) in _registry` (the test JAX's private registry answers;
    Flax NNX asks it): the built-in and registered node types are in it."""

    def __contains__(self, typ):
        return isinstance(typ, type) and _pytree.is_node(typ)


_registry = _NodeTypes()

class PyTreeRegistry:
    """The registry of pytree node types, as an object (jax.tree_util.default_registry): its methods
    are the module's functions. xjax has one registry, the default one."""

    def flatten(self, tree, leaf_predicate=None):
        return _pytree.flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """(children, node data), or None for a leaf."""
        return _pytree.flatten_one_level(tree, False)

    def flatten_one_level_with_keys(self, tree):
        return _pytree.flatten_one_level(tree, True)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, leaf_predicate)

    def is_node(self, typ):
        return _pytree.is_node(typ)

    def register_node(self, nodetype, to_iterable, from_iterable, to_iterable_with_keys=None):
        register_pytree_node(nodetype, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, nodetype, data_fields, meta_fields):
        _pytree.register_dataclass(nodetype, list(data_fields), list(meta_fields))


default_registry = PyTreeRegistry()
