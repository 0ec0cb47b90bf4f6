"""jax.tree_util.default_registry: the pytree registry as an object (results as JAX 0.10.2 gives them)."""
import xjax


def test_default_registry():
    r = xjax.tree_util.default_registry
    leaves, tree = r.flatten({"a": 1, "b": (2, 3)})
    assert leaves == [1, 2, 3] and tree == xjax.tree.structure({"a": 0, "b": (0, 0)})
    assert r.flatten_one_level({"a": 1, "b": (2, 3)}) == ((1, (2, 3)), ("a", "b"))
    assert r.flatten_one_level(1.0) is None and r.is_node(dict) and not r.is_node(int)
    paths, _ = r.flatten_with_path([1, {"x": 2}])
    assert paths == [((xjax.tree_util.SequenceKey(0),), 1),
                     ((xjax.tree_util.SequenceKey(1), xjax.tree_util.DictKey("x")), 2)]

    class Box:
        def __init__(self, a):
            self.a = a

    r.register_node(Box, lambda b: ((b.a,), None), lambda aux, ch: Box(*ch))
    assert xjax.tree.leaves(Box(5)) == [5]
