"""Leaves that transformations carry as their data: typed PRNG key arrays.

To users a typed key array is one pytree leaf (tree_leaves, tree_map, the leaves an in_axes or
donate_argnums prefix reaches), as in JAX. A trace carries arrays only, so every transformation
flattens the values it traces with `flatten` below: each such leaf becomes its data array
(uint32[*shape, 2] for a key) under a private node, and unflattening rebuilds the leaf from whatever
stands at its data's place (a tracer, an array, an abstract value, a float0 cotangent). The leaves
come in the order and number of tree_util's flattening, one per user leaf, so anything matched
against the user's tree lines up with the data.

The kinds of leaf are registered by the layer that defines them (random/keys.py, as lax fills
interpreters/array_ops): nothing here imports upwards.
"""
from xjax._src import tree_util

_splits = {}  # leaf type -> split(x): (join, aux, data) when x is carried as data, else None


class _Carried:
    """The node that stands for one carried leaf: `join(aux, data)` rebuilds it."""

    __slots__ = ("join", "aux", "data")

    def __init__(self, join, aux, data):
        self.join, self.aux, self.data = join, aux, data


class _Kind:
    """The node data of a _Carried node: compared by value (jit's cache key), printed as its aux."""

    __slots__ = ("join", "aux")

    def __init__(self, join, aux):
        self.join, self.aux = join, aux

    def __eq__(self, other):
        return type(other) is _Kind and self.join is other.join and self.aux == other.aux

    def __hash__(self):
        return hash((self.join, self.aux))

    def __repr__(self):
        return repr(self.aux)


tree_util.register_pytree_node(_Carried, lambda c: ((c.data,), _Kind(c.join, c.aux)),
                               lambda kind, children: kind.join(kind.aux, children[0]))


def register(leaf_type, split):
    """Makes transformations carry leaves of `leaf_type` as data: split(x) -> (join, aux, data),
    or None for a value of that type that is an ordinary leaf; join(aux, data) is the leaf again
    (aux must be hashable: it is part of jit's cache key)."""
    _splits[leaf_type] = split


def _carried(x):
    split = _splits.get(type(x))
    return None if split is None else split(x)


def flatten(tree):
    """tree_util.tree_flatten for a trace: (leaves, treedef) with carried leaves as their data."""
    leaves, treedef = tree_util.tree_flatten(tree)
    if _splits.keys().isdisjoint(map(type, leaves)):  # the common case, checked in C
        return leaves, treedef
    parts = [_carried(x) for x in leaves]
    if not any(parts):
        return leaves, treedef
    it = iter(parts)
    data = [x if p is None else p[2] for x, p in zip(leaves, parts)]
    return data, _with_carried(treedef, it)


def _with_carried(treedef, parts):
    """`treedef` with each leaf whose part is not None replaced by a _Carried node over one leaf
    (rebuilt from the node data, so that no user unflatten function runs)."""
    if treedef.num_nodes == 1 and treedef.num_leaves == 1:
        part = next(parts)
        if part is None:
            return treedef
        join, aux, _ = part
        return tree_util.tree_structure(_Carried(join, aux, 0))
    children = [_with_carried(c, parts) for c in treedef.children()]
    return tree_util.PyTreeDef.from_node_data_and_children(treedef.node_data(), children)


def leaves(tree):
    """The leaves of `flatten(tree)`."""
    return flatten(tree)[0]


def tree_map(f, tree, *rest):
    """tree_util.tree_map over the data of carried leaves (f sees arrays only; the leaves are
    rebuilt); the trees in `rest` have tree's structure."""
    data, treedef = flatten(tree)
    others = []
    for other in rest:
        other_data, other_def = flatten(other)
        if other_def != treedef:
            raise ValueError(f"Custom node type mismatch; expected structure {treedef}, got {other_def}.")
        others.append(other_data)
    return treedef.unflatten([f(*xs) for xs in zip(data, *others)])


def structure(tree):
    """The treedef of `flatten(tree)`."""
    return flatten(tree)[1]


def user_structure(treedef):
    """The treedef users see for a treedef of `flatten`: each carried leaf one leaf again."""
    if treedef.num_nodes == 1:
        return treedef
    node = treedef.node_data()
    if node[0] is _Carried:
        return tree_util.tree_structure(0)
    children = [user_structure(c) for c in treedef.children()]
    return tree_util.PyTreeDef.from_node_data_and_children(node, children)
