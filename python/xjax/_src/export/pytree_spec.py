"""Pytree structures as text, for the signatures stored in .xjx files.

The text is JSON, so that any reader (C++, another language) can parse it:
  a leaf            "*"
  None              null
  a tuple           {"tuple": [child, ...]}
  a list            [child, ...]
  a dict            {"dict": [[key, child], ...]}         keys: strings or ints, in sorted order
  a namedtuple      {"namedtuple": "module:QualName", "fields": [name, ...], "children": [child, ...]}
  a typed PRNG key  {"prng_key": "threefry2x32", "children": [child]}     (its key data is the leaf)
Other node types (custom classes, dataclasses) have no notation yet: exporting one is an error.
"""
import collections
import importlib
import json

from xjax._src import tree_util


class _Leaf:
    """Stands for a leaf while a structure is rebuilt."""


_LEAF = _Leaf()


def _keys():
    from xjax._src.random import keys

    return keys


def _is_namedtuple(x):
    return isinstance(x, tuple) and type(x) is not tuple and hasattr(type(x), "_fields")


def _encode(x, what):
    if x is _LEAF:
        return "*"
    if x is None:
        return None
    t = type(x)
    if t is tuple:
        return {"tuple": [_encode(c, what) for c in x]}
    if t is list:
        return [_encode(c, what) for c in x]
    if t is dict:
        keys = list(x)
        for k in keys:
            if type(k) not in (str, int):
                raise TypeError(f"{what}: a dict key of type {type(k).__name__} ({k!r}) cannot be stored in an "
                                "exported signature (keys must be str or int)")
        return {"dict": [[k, _encode(x[k], what)] for k in keys]}
    if t is _keys().PRNGKeyArray:
        return {"prng_key": x._impl.name, "children": [_encode(x._base_array, what)]}
    if _is_namedtuple(x):
        return {"namedtuple": f"{t.__module__}:{t.__qualname__}", "fields": list(t._fields),
                "children": [_encode(c, what) for c in x]}
    raise TypeError(f"{what}: the pytree node type {t.__module__}.{t.__qualname__} cannot be stored in an exported "
                    "signature (only tuples, lists, dicts, namedtuples and None)")


def treedef_to_text(treedef, what="export"):
    """The JSON text of a treedef; TypeError naming the node type it cannot write."""
    example = tree_util.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)
    text = json.dumps(_encode(example, what), separators=(",", ":"))
    # (A namedtuple class that cannot be imported comes back as a stand-in with the same fields.)
    if text_to_treedef(text).num_leaves != treedef.num_leaves:
        raise TypeError(f"{what}: the pytree structure {treedef} does not survive being stored as text")
    return text


_STAND_INS = {}


def _namedtuple_type(path, fields):
    """The class at module:QualName when it is importable and has these fields, else a stand-in."""
    module, _, qualname = path.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, type) and list(getattr(obj, "_fields", ())) == fields:
            return obj
    except Exception:  # noqa: BLE001 - any failure to find it: a stand-in of the same shape
        pass
    key = (path, tuple(fields))
    cls = _STAND_INS.get(key)
    if cls is None:  # one class per name and fields, named as the original
        cls = _STAND_INS[key] = collections.namedtuple(qualname.rpartition(".")[2] or "Node", fields, module=module)
        cls.__qualname__ = qualname
    return cls


def _decode(node):
    if node == "*":
        return _LEAF
    if node is None:
        return None
    if isinstance(node, list):
        return [_decode(c) for c in node]
    if isinstance(node, dict):
        if set(node) == {"tuple"}:
            return tuple(_decode(c) for c in node["tuple"])
        if set(node) == {"dict"}:
            return {k: _decode(c) for k, c in node["dict"]}
        if set(node) == {"namedtuple", "fields", "children"}:
            cls = _namedtuple_type(node["namedtuple"], list(node["fields"]))
            return cls(*[_decode(c) for c in node["children"]])
        if set(node) == {"prng_key", "children"}:
            keys = _keys()
            return keys.PRNGKeyArray(keys._IMPLS[node["prng_key"]], _decode(node["children"][0]))
    raise ValueError(f"not a pytree structure: {json.dumps(node)[:80]}")


def text_to_treedef(text):
    """The treedef of treedef_to_text's notation; ValueError for text that is not one."""
    try:
        node = json.loads(text)
        example = _decode(node)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as e:
        raise ValueError(f"xjax.export: a stored pytree structure cannot be read: {e}") from None
    return tree_util.tree_structure(example, is_leaf=lambda x: x is _LEAF)
