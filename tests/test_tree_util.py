"""Pytrees (xjax.tree_util, xjax.tree). Expected values were recorded from JAX 0.10.2."""
import collections
import copy
import dataclasses
import functools
import gc
import pickle
import re
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax.tree as tree
import xjax.tree_util as tu
from xjax.tree_util import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

NT = collections.namedtuple("NT", "x y")
OD, DD = collections.OrderedDict, collections.defaultdict


class Box:
    """A custom node: children are the positional args, aux data the `aux` keyword."""

    def __init__(self, *a, aux="x"):
        self.a, self.aux = a, aux

    def __eq__(self, other):
        return type(other) is Box and (self.a, self.aux) == (other.a, other.aux)

    def __repr__(self):
        return f"Box{self.a}"


tu.register_pytree_node(Box, lambda b: (b.a, b.aux), lambda aux, c: Box(*c, aux=aux))


@tu.register_dataclass
@dataclasses.dataclass
class Point:
    x: object
    y: object
    tag: str = dataclasses.field(default="p", metadata=dict(static=True))


TREES = {
    "none": None, "leaf": 1, "empty_tuple": (), "empty_list": [], "empty_dict": {},
    "seed0": [1, "a", None], "seed1": (1, (2, 3), ()), "seed2": [1, {"k1": 2, "k2": (3, 4)}, 5],
    "seed3": {"a": 2, "b": (2, 3)}, "one_tuple": (1,), "list_none": [None], "nested_empty": [[], ()],
    "int_keys": {2: "b", 1: "a", 3: None}, "tuple_keys": {(1, "x"): 1, (0, "y"): 2}, "quote_key": {"it's": 1},
    "unsorted": {"b": 1, "a": 2, "c": {"z": [None, 3], "y": 4}}, "namedtuple": NT(1, [2, 3]),
    "ordered": OD([("b", 1), ("a", 2)]), "defaultdict": DD(list, {"b": 1, "a": [2, 3]}),
    "custom": Box(1, (2, None)), "custom_empty": Box(), "dataclass": Point(1, [2, 3], tag="t"),
    "partial": tu.Partial(max, 1, key=2),
    "mixed": {"n": None, "p": [1, (2, NT(3, 4))], "q": OD([("z", 5), ("y", 6)]), "r": DD(int, {"k": 7}),
              "s": Point(8, 9), "u": Box(12, 13)},
}

# name: (treedef repr, leaves, num_leaves, num_nodes, keystr of each path, simple keystr with "/",
#        reprs of the root's children), as JAX prints them.
EXPECTED = {
    "none": ("PyTreeDef(None)", [], 0, 1, [], [], []),
    "leaf": ("PyTreeDef(*)", [1], 1, 1, [""], [""], []),
    "empty_tuple": ("PyTreeDef(())", [], 0, 1, [], [], []),
    "empty_list": ("PyTreeDef([])", [], 0, 1, [], [], []),
    "empty_dict": ("PyTreeDef({})", [], 0, 1, [], [], []),
    "seed0": ("PyTreeDef([*, *, None])", [1, "a"], 2, 4, ["[0]", "[1]"], ["0", "1"],
              ["PyTreeDef(*)", "PyTreeDef(*)", "PyTreeDef(None)"]),
    "seed1": ("PyTreeDef((*, (*, *), ()))", [1, 2, 3], 3, 6, ["[0]", "[1][0]", "[1][1]"], ["0", "1/0", "1/1"],
              ["PyTreeDef(*)", "PyTreeDef((*, *))", "PyTreeDef(())"]),
    "seed2": ("PyTreeDef([*, {'k1': *, 'k2': (*, *)}, *])", [1, 2, 3, 4, 5], 5, 8,
              ["[0]", "[1]['k1']", "[1]['k2'][0]", "[1]['k2'][1]", "[2]"], ["0", "1/k1", "1/k2/0", "1/k2/1", "2"],
              ["PyTreeDef(*)", "PyTreeDef({'k1': *, 'k2': (*, *)})", "PyTreeDef(*)"]),
    "seed3": ("PyTreeDef({'a': *, 'b': (*, *)})", [2, 2, 3], 3, 5, ["['a']", "['b'][0]", "['b'][1]"],
              ["a", "b/0", "b/1"], ["PyTreeDef(*)", "PyTreeDef((*, *))"]),
    "one_tuple": ("PyTreeDef((*,))", [1], 1, 2, ["[0]"], ["0"], ["PyTreeDef(*)"]),
    "list_none": ("PyTreeDef([None])", [], 0, 2, [], [], ["PyTreeDef(None)"]),
    "nested_empty": ("PyTreeDef([[], ()])", [], 0, 3, [], [], ["PyTreeDef([])", "PyTreeDef(())"]),
    "int_keys": ("PyTreeDef({1: *, 2: *, 3: None})", ["a", "b"], 2, 4, ["[1]", "[2]"], ["1", "2"],
                 ["PyTreeDef(*)", "PyTreeDef(*)", "PyTreeDef(None)"]),
    "tuple_keys": ("PyTreeDef({(0, 'y'): *, (1, 'x'): *})", [2, 1], 2, 3, ["[(0, 'y')]", "[(1, 'x')]"],
                   ["(0, 'y')", "(1, 'x')"], ["PyTreeDef(*)", "PyTreeDef(*)"]),
    "quote_key": ("PyTreeDef({\"it's\": *})", [1], 1, 2, ["[\"it's\"]"], ["it's"], ["PyTreeDef(*)"]),
    "unsorted": ("PyTreeDef({'a': *, 'b': *, 'c': {'y': *, 'z': [None, *]}})", [2, 1, 4, 3], 4, 8,
                 ["['a']", "['b']", "['c']['y']", "['c']['z'][1]"], ["a", "b", "c/y", "c/z/1"],
                 ["PyTreeDef(*)", "PyTreeDef(*)", "PyTreeDef({'y': *, 'z': [None, *]})"]),
    "namedtuple": ("PyTreeDef(CustomNode(namedtuple[NT], [*, [*, *]]))", [1, 2, 3], 3, 5, [".x", ".y[0]", ".y[1]"],
                   ["x", "y/0", "y/1"], ["PyTreeDef(*)", "PyTreeDef([*, *])"]),
    "ordered": ("PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))", [1, 2], 2, 3, ["['b']", "['a']"],
                ["b", "a"], ["PyTreeDef(*)", "PyTreeDef(*)"]),
    "defaultdict": ("PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [[*, *], *]))", [2, 3, 1], 3, 5,
                    ["['a'][0]", "['a'][1]", "['b']"], ["a/0", "a/1", "b"], ["PyTreeDef([*, *])", "PyTreeDef(*)"]),
    "custom": ("PyTreeDef(CustomNode(Box[x], [*, (*, None)]))", [1, 2], 2, 5,
               ["[<flat index 0>]", "[<flat index 1>][0]"], ["0", "1/0"], ["PyTreeDef(*)", "PyTreeDef((*, None))"]),
    "custom_empty": ("PyTreeDef(CustomNode(Box[x], []))", [], 0, 1, [], [], []),
    "dataclass": ("PyTreeDef(CustomNode(Point[('t',)], [*, [*, *]]))", [1, 2, 3], 3, 5, [".x", ".y[0]", ".y[1]"],
                  ["x", "y/0", "y/1"], ["PyTreeDef(*)", "PyTreeDef([*, *])"]),
    "partial": ("PyTreeDef(CustomNode(Partial[<built-in function max>], [(*,), {'key': *}]))", [1, 2], 2, 5,
                ["[<flat index 0>][0]", "[<flat index 1>]['key']"], ["0/0", "1/key"],
                ["PyTreeDef((*,))", "PyTreeDef({'key': *})"]),
    "mixed": ("PyTreeDef({'n': None, 'p': [*, (*, CustomNode(namedtuple[NT], [*, *]))], "
              "'q': CustomNode(OrderedDict[('z', 'y')], [*, *]), 'r': CustomNode(defaultdict[(<class 'int'>, ('k',))], "
              "[*]), 's': CustomNode(Point[('p',)], [*, *]), 'u': CustomNode(Box[x], [*, *])})",
              [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13], 11, 20,
              ["['p'][0]", "['p'][1][0]", "['p'][1][1].x", "['p'][1][1].y", "['q']['z']", "['q']['y']", "['r']['k']",
               "['s'].x", "['s'].y", "['u'][<flat index 0>]", "['u'][<flat index 1>]"],
              ["p/0", "p/1/0", "p/1/1/x", "p/1/1/y", "q/z", "q/y", "r/k", "s/x", "s/y", "u/0", "u/1"],
              ["PyTreeDef(None)", "PyTreeDef([*, (*, CustomNode(namedtuple[NT], [*, *]))])",
               "PyTreeDef(CustomNode(OrderedDict[('z', 'y')], [*, *]))",
               "PyTreeDef(CustomNode(defaultdict[(<class 'int'>, ('k',))], [*]))",
               "PyTreeDef(CustomNode(Point[('p',)], [*, *]))", "PyTreeDef(CustomNode(Box[x], [*, *]))"]),
}


# --- Flatten, unflatten and the treedef ------------------------------------------------------

@pytest.mark.parametrize("name", list(TREES))
def test_flatten_matches_jax(name):
    t = TREES[name]
    rep, leaves, n_leaves, n_nodes, paths, simple, children = EXPECTED[name]
    got_leaves, td = tu.tree_flatten(t)
    assert repr(td) == str(td) == rep
    assert got_leaves == leaves == tu.tree_leaves(t)
    assert (td.num_leaves, td.num_nodes) == (n_leaves, n_nodes)
    assert [repr(c) for c in td.children()] == children
    assert tu.tree_structure(t) == td
    pairs = tu.tree_flatten_with_path(t)[0]
    assert [tu.keystr(p) for p, _ in pairs] == paths
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs] == simple
    assert [x for _, x in pairs] == leaves
    assert tu.tree_leaves_with_path(t) == pairs


@pytest.mark.parametrize("name", list(TREES))
def test_unflatten_roundtrip(name):
    t = TREES[name]
    leaves, td = tu.tree_flatten(t)
    back = tu.tree_unflatten(td, leaves)
    assert type(back) is type(t)
    assert tu.tree_structure(back) == td
    assert tu.tree_leaves(back) == leaves
    assert tu.tree_structure(td.unflatten(iter(leaves))) == td  # any iterable of leaves
    assert tu.tree_structure(tu.tree_map(lambda x: [x], t)) == td.compose(tu.tree_structure([0]))
    assert td.flatten_up_to(t) == leaves


def test_seed_program_output():
    # ../shared/seed-programs/seed_002_jit.py prints these (its last example tree is a jnp array,
    # a single leaf; a plain object stands in for it here).
    marker = object()
    lines = []
    for pytree in [[1, "a", None], (1, (2, 3), ()), [1, {"k1": 2, "k2": (3, 4)}, 5], {"a": 2, "b": (2, 3)}]:
        leaves = tu.tree_leaves(pytree)
        lines.append(f"{repr(pytree):<45} has {len(leaves)} leaves: {leaves}")
    assert lines == [
        "[1, 'a', None]                                has 2 leaves: [1, 'a']",
        "(1, (2, 3), ())                               has 3 leaves: [1, 2, 3]",
        "[1, {'k1': 2, 'k2': (3, 4)}, 5]               has 5 leaves: [1, 2, 3, 4, 5]",
        "{'a': 2, 'b': (2, 3)}                         has 3 leaves: [2, 2, 3]",
    ]
    assert tu.tree_leaves(marker) == [marker]
    assert str(tu.tree_map(lambda x: x * 2, [[1, 2, 3], [1, 2], [1, 2, 3, 4]])) == "[[2, 4, 6], [2, 4], [2, 4, 6, 8]]"
    params = [dict(weights=np.zeros((n_in, n_out)), biases=np.ones(n_out))
              for n_in, n_out in zip([1, 128, 128], [128, 128, 1])]
    assert str(tu.tree_map(lambda x: x.shape, params)) == (
        "[{'biases': (128,), 'weights': (1, 128)}, {'biases': (128,), 'weights': (128, 128)}, "
        "{'biases': (1,), 'weights': (128, 1)}]")


def test_none_is_an_empty_subtree():
    assert tu.tree_leaves([None]) == [] and tu.tree_leaves(None) == []
    assert tu.tree_map(lambda x: x + 1, [None, 1, (None,)]) == [None, 2, (None,)]
    # is_leaf can claim None, before the registry is asked.
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert repr(tu.tree_structure([None, 1], is_leaf=lambda x: x is None)) == "PyTreeDef([*, *])"
    assert tu.tree_map(lambda x: x, None) is None
    assert tu.tree_map(lambda x, y: (x, y), [None, 1], [None, 2]) == [None, (1, 2)]
    assert tu.tree_structure(None).unflatten([]) is None
    assert tu.treedef_is_leaf(tu.tree_structure(None))


def test_dicts_sorted_and_rebuilt_in_sorted_order():
    d = {"b": 1, "a": 2, "c": 3}
    assert tu.tree_leaves(d) == [2, 1, 3]
    out = tu.tree_map(lambda x: x, d)
    assert list(out) == ["a", "b", "c"] and out == d
    assert tu.tree_structure({"a": 1, "b": 2}) == tu.tree_structure({"b": 3, "a": 4})
    assert tu.tree_structure({"a": 1}) != tu.tree_structure({"b": 1})
    big = {f"k{i:03d}": i for i in range(40)[::-1]}  # past the small-dict path
    assert tu.tree_leaves(big) == list(range(40))
    assert list(tu.tree_map(lambda x: x, big)) == sorted(big)
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree dictionary keys"):
        tu.tree_leaves({1: 1, "a": 2})


def test_ordered_and_default_dicts():
    od = OD([("b", 1), ("a", 2)])
    out = tu.tree_map(lambda x: x * 10, od)
    assert type(out) is OD and list(out.items()) == [("b", 10), ("a", 20)]
    dd = DD(list, {"b": 1, "a": 2})
    out = tu.tree_map(lambda x: x * 10, dd)
    assert type(out) is DD and out.default_factory is list and list(out.items()) == [("a", 20), ("b", 10)]
    assert tu.tree_structure(od) != tu.tree_structure({"b": 1, "a": 2})
    assert tu.tree_structure(OD(a=1, b=2)) != tu.tree_structure(OD(b=1, a=2))
    assert tu.tree_structure(DD(list, a=1)) != tu.tree_structure(DD(int, a=1))


def test_which_types_are_nodes():
    class L(list):
        pass

    class D(dict):
        pass

    class T(tuple):
        pass

    class NTSub(NT):
        pass

    # Subclasses of the containers are leaves; namedtuples (and their subclasses) are nodes.
    tree_ = [L([1, 2]), D(a=1), T((1, 2)), NTSub(3, 4), np.zeros(2), "str", b"bytes", {1, 2}]
    leaves = tu.tree_leaves(tree_)
    assert len(leaves) == 9 and leaves[3:5] == [3, 4]
    assert repr(tu.tree_structure(NTSub(1, 2))) == "PyTreeDef(CustomNode(namedtuple[NTSub], [*, *]))"
    out = tu.tree_map(lambda x: x, NT(1, [2]))
    assert type(out) is NT and out == NT(1, [2])
    assert [tu.is_tree_node(t) for t in (list, tuple, dict, type(None), NT, OD, Box, Point, int, L)] == [
        True, True, True, True, True, True, True, True, False, False]
    assert tu.all_leaves([1, "a", np.zeros(1)]) and not tu.all_leaves([1, None]) and not tu.all_leaves([[1]])
    assert tu.all_leaves([[1], 2], is_leaf=lambda x: isinstance(x, list) and len(x) == 1)


def test_is_leaf():
    t = [1, [2, 3], {"a": [4]}]
    assert tu.tree_leaves(t, is_leaf=lambda x: isinstance(x, list) and len(x) == 2) == [1, [2, 3], 4]
    assert tu.tree_leaves(t, is_leaf=lambda x: x is t) == [t]
    inner_list = lambda x: isinstance(x, list) and x is not t  # noqa: E731
    sizes = tu.tree_map(lambda x: len(x) if isinstance(x, list) else -x, t, is_leaf=inner_list)
    assert sizes == [-1, 2, {"a": 1}]
    with pytest.raises(ZeroDivisionError):
        tu.tree_leaves(t, is_leaf=lambda x: 1 / 0)
    with pytest.raises(TypeError, match="is_leaf must be callable"):
        tu.tree_leaves(t, is_leaf=5)


def test_treedef_equality_and_hash():
    a, b = tu.tree_structure([1, {"a": (2, None)}]), tu.tree_structure(["x", {"a": ("y", None)}])
    assert a == b and not a != b and hash(a) == hash(b)
    cache = {a: "hit"}
    assert cache[b] == "hit"
    others = [tu.tree_structure(t) for t in ([1, {"a": (2, 3)}], [1, {"b": (2, None)}], (1, {"a": (2, None)}),
                                             [1, {"a": [2, None]}], [1, {"a": (2, None)}, 3])]
    assert all(a != o for o in others) and len({a, *others}) == 6
    assert tu.tree_structure(Box(1, aux="x")) == tu.tree_structure(Box(2, aux="x"))
    assert tu.tree_structure(Box(1, aux="x")) != tu.tree_structure(Box(1, aux="y"))
    assert tu.tree_structure(NT(1, 2)) != tu.tree_structure((1, 2))
    assert tu.tree_structure(tu.Partial(max, 1)) == tu.tree_structure(tu.Partial(max, 2))
    assert tu.tree_structure(tu.Partial(max, 1)) != tu.tree_structure(tu.Partial(min, 1))
    assert (a == 5) is False and (a != 5) is True
    with pytest.raises(TypeError):
        a < b  # noqa: B015
    # Aux data need not be hashable for hashing the treedef (JAX does not hash it either).
    hash(tu.tree_structure(Box(1, aux=[1, 2])))
    assert isinstance(a, tu.PyTreeDef)
    assert copy.copy(a) is a and copy.deepcopy({"t": a})["t"] is a


def test_treedef_methods():
    td = tu.tree_structure([(1, 2), 3, {"a": 4}])
    assert tu.treedef_children(td) == [tu.tree_structure(x) for x in [(1, 2), 3, {"a": 4}]]
    assert td.node_data() == (list, None)
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(NT(1, 2)).node_data() == (NT, None)
    assert tu.tree_structure(Box(1, aux="q")).node_data() == (Box, "q")
    assert tu.tree_structure(Point(1, 2)).node_data() == (Point, ("p",))
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(1).node_data() is None
    for t in TREES.values():
        d = tu.tree_structure(t)
        assert tu.PyTreeDef.from_node_data_and_children(d.node_data(), d.children()) == d
    inner = tu.tree_structure({"a": 1, "b": None})
    composed = tu.tree_structure([1, (2, 3)]).compose(inner)
    assert repr(composed) == "PyTreeDef([{'a': *, 'b': None}, ({'a': *, 'b': None}, {'a': *, 'b': None})])"
    assert (composed.num_leaves, composed.num_nodes) == (3, 11)
    assert composed == tu.tree_structure([{"a": 1, "b": None}, ({"a": 1, "b": None}, {"a": 1, "b": None})])
    assert tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, None])]) == tu.tree_structure((1, [1, None]))
    assert [tu.treedef_is_leaf(tu.tree_structure(x)) for x in (1, None, [], [1])] == [True, True, True, False]
    assert tu.tree_structure([1, [2, 3]]).flatten_up_to([[9], [8, 7]]) == [[9], 8, 7]


def test_unflatten_errors():
    td = tu.tree_structure([1, 2])
    few = r"^Too few leaves for PyTreeDef; expected 2, got 1\n.*PyTreeDef\(\[\*, \*\]\)"
    with pytest.raises(ValueError, match=few):
        tu.tree_unflatten(td, [1])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 2\.\n.*PyTreeDef\(\[\*, \*\]\)"):
        td.unflatten([1, 2, 3])
    with pytest.raises(TypeError, match="leaves must be an iterable"):
        td.unflatten(5)
    assert tu.tree_structure(5).unflatten([[1, 2]]) == [1, 2]


# First lines of JAX's flatten_up_to errors.
@pytest.mark.parametrize("structure,bad,message", [
    ([1, 2], [1, 2, 3], "List arity mismatch: 3 != 2; list: [1, 2, 3]."),
    ([1, 2], None, "Expected list, got None."),
    ([None, 1], [1, 1], "Expected None, got 1."),
    ({"a": 1}, {"b": 1}, "Dict key mismatch; expected keys: ['a']; present keys: ['b']."),
    ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
    ((1, 2), (1,), "Tuple arity mismatch: 1 != 2; tuple: (1,)."),
    (NT(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Box(1), 5, f"Custom node type mismatch: expected type: {Box!r}, value: 5."),
    (Box(1), Box(1, aux="z"), "Mismatch custom node data: 'x' != 'z'; value: Box(1,)."),
    (Box(1), Box(1, 2), "Custom type arity mismatch: 2 != 1; value: Box(1, 2)."),
    (Point(1, 2), Point(1, 2, "z"),
     "Mismatch custom dataclass node data: ('p',) != ('z',); value: Point(x=1, y=2, tag='z')."),
])
def test_flatten_up_to_errors(structure, bad, message):
    with pytest.raises(ValueError) as e:
        tu.tree_structure(structure).flatten_up_to(bad)
    assert str(e.value).split("\n")[0] == message


# --- tree_map and structure mismatch messages ------------------------------------------------

def test_tree_map_several_trees():
    assert tu.tree_map(lambda *x: sum(x), [1, {"a": 2}], [10, {"a": 20}], [100, {"a": 200}]) == [111, {"a": 222}]
    # The other trees may hold whole subtrees where the first has leaves.
    assert tu.tree_map(lambda x, y: (x, y), [1, [2, 3]], [[4, 5], [6, 7]]) == [(1, [4, 5]), [(2, 6), (3, 7)]]
    is_pair = lambda x: isinstance(x, list) and len(x) == 2 and x[0] == 2  # noqa: E731
    assert tu.tree_map(lambda x, y: (x, y), [1, [2, 3]], [4, [6, 7]], is_leaf=is_pair) == [(1, 4), ([2, 3], [6, 7])]
    assert tu.tree_map(lambda x: x, []) == []
    assert tu.tree_map(lambda x: x + 1, 5) == 6


# tree_map(f, a, b) errors: JAX's message, then both structures.
MISMATCHES = [
    ([1, 2], [1, 2, 3],
     "pytree structure error: different lengths of list at key path\n    tree_map tree\nAt that key path, the prefix "
     "pytree tree_map tree has a subtree of type list of length 2, but the full pytree has a subtree of the same type "
     "but of length 3."),
    ([1, 2], (1, 2),
     "pytree structure error: different types at key path\n    tree_map tree\nAt that key path, the prefix pytree "
     "tree_map tree has a subtree of type\n    <class 'list'>\nbut at the same key path the full pytree has a subtree "
     "of different type\n    <class 'tuple'>."),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2},
     "pytree structure error: different pytree metadata at key path\n    tree_map tree\nAt that key path, the prefix "
     "pytree tree_map tree has a subtree of type\n    <class 'dict'>\nwith metadata\n    ('a', 'b')\nbut at the same "
     "key path the full pytree has a subtree of the same type but with metadata\n    ('a', 'c')\nso the diff in the "
     "metadata at these pytree nodes is\n    - ('a', 'b')\n    ?        ^\n\n    + ('a', 'c')\n    ?        ^\n"),
    ([1, None], [2, 3],
     "pytree structure error: different types at key path\n    tree_map tree[1]\nAt that key path, the prefix pytree "
     "tree_map tree has a subtree of type\n    <class 'NoneType'>\nbut at the same key path the full pytree has a "
     "subtree of different type\n    <class 'int'>."),
    ({"a": [1, {"q": 2}]}, {"a": [1, {"r": 2}]},
     "pytree structure error: different pytree metadata at key path\n    tree_map tree['a'][1]\nAt that key path, the "
     "prefix pytree tree_map tree has a subtree of type\n    <class 'dict'>\nwith metadata\n    ('q',)\nbut at the "
     "same key path the full pytree has a subtree of the same type but with metadata\n    ('r',)\nso the diff in the "
     "metadata at these pytree nodes is\n    - ('q',)\n    ?   ^\n\n    + ('r',)\n    ?   ^\n"),
    ({"a": 1, "b": 2}, {"a": 1},
     "pytree structure error: different numbers of pytree children at key path\n    tree_map tree\nAt that key path, "
     "the prefix pytree tree_map tree has a subtree of type\n    <class 'dict'>\nwith 2 child keys\n    a b\n"
     "but at the "
     "same key path the full pytree has a subtree of the same type but with 1 child keys\n    a\nso the symmetric "
     "difference on key sets is\n    b"),
    (Box(1, 2), Box(1, 2, 3),
     "pytree structure error: different numbers of pytree children at key path\n    tree_map tree\nAt that key path, "
     "the prefix pytree tree_map tree has a subtree of type\n    <class '__main__.Box'>\nwith 2 child keys\n    0 1\n"
     "but at the same key path the full pytree has a subtree of the same type but with 3 child keys\n    0 1 2\nso the "
     "symmetric difference on key sets is\n    2"),
    (Point(1, 2), Point(1, 2, tag="q"),
     "pytree structure error: different pytree metadata at key path\n    tree_map tree\nAt that key path, the prefix "
     "pytree tree_map tree has a subtree of type\n    <class '__main__.Point'>\nwith metadata\n    ('p',)\nbut at the "
     "same key path the full pytree has a subtree of the same type but with metadata\n    ('q',)\nso the diff in the "
     "metadata at these pytree nodes is\n    - ('p',)\n    ?   ^\n\n    + ('q',)\n    ?   ^\n"),
    (NT(1, 2), (1, 2),
     "pytree structure error: different types at key path\n    tree_map tree\nAt that key path, the prefix pytree "
     "tree_map tree has a subtree of type\n    <class '__main__.NT'>\nbut at the same key path the full pytree has a "
     "subtree of different type\n    <class 'tuple'>."),
    ({"x": [Box(1, aux="a")]}, {"x": [Box(1, aux="b")]},
     "pytree structure error: different pytree metadata at key path\n    tree_map tree['x'][0]\nAt that key path, the "
     "prefix pytree tree_map tree has a subtree of type\n    <class '__main__.Box'>\nwith metadata\n    a\nbut at the "
     "same key path the full pytree has a subtree of the same type but with metadata\n    b\nso the diff in the "
     "metadata at these pytree nodes is\n    - a\n    + b"),
]


@pytest.mark.parametrize("a,b,jax_message", MISMATCHES)
def test_tree_map_mismatch_message(a, b, jax_message):
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: 0, a, b)
    expected = jax_message.replace("__main__", __name__) + (
        f"\nThe structures:\n    tree_map tree: {tu.tree_structure(a)}\n    rest[0]: {tu.tree_structure(b)}")
    assert str(e.value) == expected
    with pytest.raises(ValueError, match=r"tree_map_with_path tree"):
        tu.tree_map_with_path(lambda p, x, y: 0, a, b)


def test_mismatch_names_the_failing_tree():
    with pytest.raises(ValueError, match=r"rest\[1\]: PyTreeDef\(\[\*\]\)$"):
        tu.tree_map(lambda *x: 0, [1, 2], [1, 2], [1])


def test_tree_map_with_path():
    out = tu.tree_map_with_path(lambda p, x: (tu.keystr(p), x), {"a": [1, 2], "b": Point(3, 4)})
    assert out == {"a": [("['a'][0]", 1), ("['a'][1]", 2)], "b": Point(("['b'].x", 3), ("['b'].y", 4))}
    out = tu.tree_map_with_path(lambda p, x, y: (len(p), x + y), [1, (2,)], [10, (20,)])
    assert out == [(1, 11), ((2, 22),)]
    pairs, td = tu.tree_flatten_with_path([1, [2, 3]], is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True)
    assert pairs == [((SequenceKey(0),), 1), ((SequenceKey(1),), [2, 3])] and repr(td) == "PyTreeDef([*, *])"
    assert tu.tree_flatten_with_path(5) == ([((), 5)], tu.tree_structure(5))


# --- Key paths -------------------------------------------------------------------------------

def test_key_classes():
    keys = [SequenceKey(0), DictKey("a"), DictKey(1), GetAttrKey("x"), FlattenedIndexKey(3)]
    assert [repr(k) for k in keys] == ["SequenceKey(idx=0)", "DictKey(key='a')", "DictKey(key=1)",
                                       "GetAttrKey(name='x')", "FlattenedIndexKey(key=3)"]
    assert [str(k) for k in keys] == ["[0]", "['a']", "[1]", ".x", "[<flat index 3>]"]
    assert SequenceKey(0) == SequenceKey(0) and hash(SequenceKey(0)) == hash(SequenceKey(0))
    assert SequenceKey(0) != FlattenedIndexKey(0) and DictKey("a") != "a" and DictKey("a") != DictKey("b")
    assert [k.__match_args__ for k in (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)] == [
        ("idx",), ("key",), ("name",), ("key",)]
    match DictKey("q"):
        case DictKey(key=k):
            assert k == "q"
    with pytest.raises(AttributeError):
        SequenceKey(0).idx = 1
    assert pickle.loads(pickle.dumps(DictKey("a"))) == DictKey("a")


def test_keystr():
    path = (DictKey("a"), SequenceKey(0), GetAttrKey("x"), FlattenedIndexKey(2))
    assert tu.keystr(path) == "['a'][0].x[<flat index 2>]"
    assert tu.keystr(path, simple=True, separator="/") == "a/0/x/2"
    assert tu.keystr((DictKey("a"), "raw", 3)) == "['a']raw3"
    assert tu.keystr((DictKey("a"), "raw", 3), simple=True, separator=".") == "a.raw.3"
    assert tu.keystr(()) == ""


def test_register_with_keys():
    @tu.register_pytree_with_keys_class
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((GetAttrKey("x"), self.x), (DictKey("yy"), self.y)), "pair"

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    pairs, td = tu.tree_flatten_with_path(Pair(1, [2, 3]))
    assert [tu.keystr(p) for p, _ in pairs] == [".x", "['yy'][0]", "['yy'][1]"]
    assert repr(td) == "PyTreeDef(CustomNode(Pair[pair], [*, [*, *]]))"
    assert tu.tree_leaves(Pair(1, [2, 3])) == [1, 2, 3]
    assert tu.tree_map(lambda v: v * 2, Pair(1, 2)).y == 4

    class Triple:
        def __init__(self, *xs):
            self.xs = xs

    tu.register_pytree_with_keys(Triple, lambda t: ([(SequenceKey(i), x) for i, x in enumerate(t.xs)], None),
                                 lambda _, xs: Triple(*xs), lambda t: (t.xs, None))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Triple(1, 2))] == ["[0]", "[1]"]
    assert tu.flatten_one_level_with_keys(Triple(1, 2)) == ([(SequenceKey(0), 1), (SequenceKey(1), 2)], None)


# --- Registration ----------------------------------------------------------------------------

def test_register_pytree_node_class_and_errors():
    @tu.register_pytree_node_class
    class Acc:
        def __init__(self, total, count):
            self.total, self.count = total, count

        def tree_flatten(self):
            return (self.total,), self.count

        @classmethod
        def tree_unflatten(cls, count, children):
            return cls(*children, count)

    out = tu.tree_map(lambda x: x + 1, [Acc(1.0, 3)])
    assert out[0].total == 2.0 and out[0].count == 3
    assert repr(tu.tree_structure(Acc(1, 3))) == "PyTreeDef(CustomNode(Acc[3], [*]))"
    for typ in (Acc, list, dict, tuple, type(None), OD, DD, Point, tu.Partial):
        with pytest.raises(ValueError, match=r"^Duplicate custom (dataclass )?PyTreeDef type registration for "):
            tu.register_pytree_node(typ, lambda x: ((), None), lambda a, c: None)
    with pytest.raises(TypeError, match="must be a type"):
        tu.register_pytree_node(5, lambda x: ((), None), lambda a, c: None)


def test_bad_flatten_functions():
    def node(flatten):
        cls = type("Bad", (), {})
        tu.register_pytree_node(cls, flatten, lambda a, c: cls())
        return cls()

    prefix = "The to_iterable function for a custom PyTree node should return a (children, aux_data) tuple"
    with pytest.raises(ValueError, match=re.escape(prefix + ", got 5")):
        tu.tree_leaves(node(lambda x: 5))
    with pytest.raises(ValueError, match=re.escape(prefix + ", got (1, 2, 3)")):
        tu.tree_leaves([node(lambda x: (1, 2, 3))])
    with pytest.raises(ValueError, match=re.escape(prefix + " where 'children' is iterable, got (5, None)")):
        tu.tree_leaves({"a": node(lambda x: (5, None))})
    with pytest.raises(KeyError):
        tu.tree_leaves(node(lambda x: {}["missing"]))
    # Any iterable of children is fine, a generator included.
    gen = node(lambda x: ((c for c in [1, [2]]), None))
    assert tu.tree_leaves(gen) == [1, 2]


def test_register_dataclass():
    p = Point(1, [2, 3], tag="t")
    out = tu.tree_map(lambda x: x * 10, p)
    assert out == Point(10, [20, 30], tag="t")

    @functools.partial(tu.register_dataclass, data_fields=["a"], meta_fields=["b"])
    @dataclasses.dataclass
    class Explicit:
        a: object
        b: object

    assert repr(tu.tree_structure(Explicit(1, 2))) == "PyTreeDef(CustomNode(Explicit[(2,)], [*]))"
    assert tu.tree_leaves_with_path(Explicit(1, 2)) == [((GetAttrKey("a"),), 1)]

    @tu.register_dataclass
    @dataclasses.dataclass
    class WithStatic:
        x: object
        mode: str = tree.static(default="add")

    assert repr(tu.tree_structure(WithStatic(1))) == "PyTreeDef(CustomNode(WithStatic[('add',)], [*]))"

    class Plain:
        def __init__(self, u, v):
            self.u, self.v = u, v

    tu.register_dataclass(Plain, data_fields=["u"], meta_fields=["v"])
    back = tu.tree_map(lambda x: x + 1, Plain(1, "meta"))
    assert (back.u, back.v) == (2, "meta")

    @dataclasses.dataclass
    class Two:
        a: int
        b: int

    with pytest.raises(TypeError, match="data_fields and meta_fields must both be specified"):
        tu.register_dataclass(Two, data_fields=["a"])
    with pytest.raises(ValueError, match=r"only them\. Missing fields: \{'b'\}"):
        tu.register_dataclass(Two, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match=r"Unexpected fields: \{'c'\}"):
        tu.register_dataclass(Two, data_fields=["a", "b", "c"], meta_fields=[])
    with pytest.raises(ValueError, match=r"must not overlap\. Overlapping fields: \{'b'\}"):
        tu.register_dataclass(Two, data_fields=["a", "b"], meta_fields=["b"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(type("NotDC", (), {}))
    with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef type registration"):
        tu.register_dataclass(Explicit)


def test_register_static():
    @tu.register_static
    class Mode(str):
        pass

    assert tu.tree_leaves([Mode("a"), 1]) == [1]
    assert tu.tree_structure(Mode("a")) == tu.tree_structure(Mode("a"))
    assert tu.tree_structure(Mode("a")) != tu.tree_structure(Mode("b"))
    assert tu.tree_map(lambda x: x, Mode("a")) == "a"


def test_partial():
    p = tu.Partial(max, 1, key=abs)
    assert isinstance(p, functools.partial) and p(-5) == -5
    doubled = tu.tree_map(lambda x: x * 10, tu.Partial(max, 1, 5))
    assert isinstance(doubled, tu.Partial) and doubled.args == (10, 50) and doubled(30) == 50
    assert tu.tree_leaves(tu.Partial(print)) == []
    # A functools.partial given to Partial keeps its own arguments out of the leaves.
    inner = tu.Partial(functools.partial(max, 1), 2)
    assert tu.tree_leaves(inner) == [2] and inner(7) == 7
    assert tu.tree_unflatten(tu.tree_structure(inner), [9])(7) == 9
    assert tu.tree_structure(inner) == tu.tree_structure(tu.Partial(inner.func, 3))


# --- Reductions and other helpers ------------------------------------------------------------

def test_reduce_all_transpose_broadcast():
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    cat = lambda a, b: f"({a}{b})"  # noqa: E731
    assert tu.tree_reduce_associative(cat, list("abcdefg")) == "((a(bc))((de)(fg)))"
    assert tu.tree_reduce_associative(cat, [], identity="") == ""
    with pytest.raises(TypeError, match="Must specify identity"):
        tu.tree_reduce_associative(cat, [])
    assert tu.tree_all([1, True, {"a": 2}]) and not tu.tree_all([1, {"a": 0}]) and tu.tree_all([])
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    assert tu.tree_transpose(outer, None, [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    out = tu.tree_transpose(tu.tree_structure({"a": 0, "b": 0}), tu.tree_structure([0, 0]), {"a": [1, 2], "b": [3, 4]})
    assert out == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    with pytest.raises(TypeError, match=r"^Mismatch\nPyTreeDef\(\[\(\*, \*, \*\), \(\*, \*, \*\)\]\)\n != \n"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), [(1, 2, 3), (4, 5, 6)])
    assert tu.tree_broadcast([1, {"a": 2}], [[5, 6], {"a": (1, 2)}]) == [[1, 1], {"a": (2, 2)}]
    with pytest.raises(ValueError, match="broadcast_prefix prefix_tree"):
        tu.tree_broadcast([1, 2], [1, 2, 3])


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": [1], "a": 2}) == ((2, [1]), ("a", "b"))
    assert tu.flatten_one_level(NT(1, 2)) == ([1, 2], NT)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level_with_keys([5, 6]) == (((SequenceKey(0), 5), (SequenceKey(1), 6)), None)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)


def test_deep_and_cyclic_trees():
    deep = 0
    for _ in range(200):
        deep = [deep]
    assert tu.tree_leaves(deep) == [0]
    assert tu.tree_structure(tu.tree_map(lambda x: x, deep)) == tu.tree_structure(deep)
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(RecursionError):
        tu.tree_leaves(cyclic)


def test_entry_point_arguments():
    is_list = lambda x: isinstance(x, list)  # noqa: E731
    assert tu.tree_flatten(tree=[1, [2]], is_leaf=is_list)[0] == [[1, [2]]]
    assert tu.tree_leaves([1, [2]], None) == [1, 2] and tu.tree_structure([1], is_leaf=None).num_leaves == 1
    for bad in (lambda: tu.tree_flatten(), lambda: tu.tree_flatten(1, 2, 3), lambda: tu.tree_leaves(is_leaf=is_list),
                lambda: tu.tree_flatten([1], is_list, is_leaf=is_list), lambda: tu.tree_structure([1], bogus=1)):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(TypeError, match="cannot create"):
        tu.PyTreeDef()
    with pytest.raises(TypeError, match="expected a PyTreeDef"):
        tu.tree_structure([1]).compose([1])


def test_treedef_cycles_are_collected():
    class Holder:
        pass

    h = Holder()
    h.treedef = tu.tree_structure(Box(1, aux=h))  # h -> treedef -> aux h
    alive = weakref.ref(h)
    del h
    gc.collect()
    assert alive() is None


def test_public_modules():
    assert sorted(tree.__all__) == ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
                                    "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
                                    "transpose", "unflatten"]
    assert all(hasattr(tree, n) for n in tree.__all__) and all(hasattr(tu, n) for n in tu.__all__)
    assert tree.map(lambda x: x * 2, {"a": 1}) == {"a": 2} and tree.leaves([1, [2]]) == [1, 2]
    leaves, td = tree.flatten((1, 2))
    assert tree.unflatten(td, leaves) == (1, 2) and tree.structure((3, 4)) == td
    assert tree.reduce(lambda a, b: a * b, {"a": 2, "b": (3, 4)}, 1) == 24 and tree.all([1])
    assert tu.Partial.__module__ == "xjax.tree_util"


# --- Properties over random trees --------------------------------------------------------------

_leaves = st.one_of(st.integers(-5, 5), st.text(max_size=2), st.floats(allow_nan=False))
_trees = st.recursive(
    st.one_of(_leaves, st.none()),
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.lists(kids, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), kids, max_size=4),
        st.builds(NT, kids, kids), st.builds(Point, kids, kids),
        st.dictionaries(st.text(max_size=3), kids, max_size=3).map(lambda d: OD(d))),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(_trees)
def test_roundtrip_property(t):
    leaves, td = tu.tree_flatten(t)
    assert td.num_leaves == len(leaves)
    back = td.unflatten(leaves)
    assert tu.tree_structure(back) == td and hash(tu.tree_structure(back)) == hash(td)
    assert repr(tu.tree_structure(back)) == repr(td)
    assert tu.tree_leaves(back) == leaves
    assert td.flatten_up_to(t) == leaves
    pairs = tu.tree_leaves_with_path(t)
    assert [x for _, x in pairs] == leaves and len({tu.keystr(p) for p, _ in pairs}) == len(pairs)
    marked = tu.tree_map(lambda x: ("m", x), t)
    assert tu.tree_leaves(marked, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("m",)) == [
        ("m", x) for x in leaves]
    children = td.children()
    if td.num_nodes > 1 or td.node_data() is not None:
        assert sum(c.num_leaves for c in children) == td.num_leaves
        assert tu.PyTreeDef.from_node_data_and_children(td.node_data(), children) == td
