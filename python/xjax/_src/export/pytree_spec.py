"""Pytree structures as text, for the signatures stored in .xjx files.

The text is JSON, so that any reader (C++, another language) can parse it:
  a leaf            "*"
  None              null
  a tuple           {"tuple": [child, ...]}
  a list            [child, ...]
  a dict            {"dict": [[key, child], ...]}         keys: strings or ints, in sorted order
  a typed PRNG key  {"prng_key": "threefry2x32", "children": [child]}     (its key data is the leaf)
  a registered node {"custom": serialized name, "auxdata": hex bytes, "children": [child, ...]}
A namedtuple or custom node is stored under the name its user registered
(register_namedtuple_serialization, register_pytree_node_serialization, as jax.export has them):
a file names no Python module or class, and loading one never imports anything. Files written
before registrations stored namedtuples as {"namedtuple": "module:QualName", "fields": [...], ...};
they load when that text is registered as the serialized name.
"""
import json

from xjax._src import data_leaves, tree_util
from xjax._src.random import keys

_SERIALIZERS = {}    # node type -> (serialized name, serialize_auxdata)
_DESERIALIZERS = {}  # serialized name -> (node type, deserialize_auxdata, from_children)


def register_pytree_node_serialization(nodetype, *, serialized_name, serialize_auxdata, deserialize_auxdata,
                                       from_children=None):
    """Stores pytree nodes of `nodetype` in exported signatures under `serialized_name`.

    serialize_auxdata(aux_data) -> bytes and deserialize_auxdata(bytes) -> aux_data convert the node's
    aux data (what its flatten function returns); from_children(aux_data, children) rebuilds a node,
    by default the unflatten function nodetype was registered with. Returns nodetype (a decorator).
    """
    if nodetype in _SERIALIZERS:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. Previous registration was "
                         f"with serialized_name `{_SERIALIZERS[nodetype][0]}`.")
    if serialized_name in _DESERIALIZERS:
        raise ValueError(f"Duplicate serialization registration for serialized_name `{serialized_name}`. Previous "
                         f"registration was for type `{_DESERIALIZERS[serialized_name][0]}`.")
    if from_children is None:
        from_children = tree_util.registered_unflatten(nodetype)
        if from_children is None:
            raise ValueError(f"If `from_children` is not present, you must call first "
                             f"`xjax.tree_util.register_pytree_node` for `{nodetype}`")
    _SERIALIZERS[nodetype] = (serialized_name, serialize_auxdata)
    _DESERIALIZERS[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name):
    """Stores namedtuples of type `nodetype` in exported signatures under `serialized_name` (with their
    field names, which must match when they are read back). Returns nodetype (a decorator)."""
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError("Use `xjax.export.register_pytree_node_serialization` for types other than "
                         "`collections.namedtuple`.")
    fields = list(nodetype._fields)

    def deserialize_auxdata(data):
        stored = json.loads(bytes(data).decode())
        if stored != fields:
            raise ValueError(f"The namedtuple `{serialized_name}` was stored with the fields {stored}; the class "
                             f"registered for it has {fields}")
        return None

    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=lambda _: json.dumps(fields).encode(),
        deserialize_auxdata=deserialize_auxdata, from_children=lambda _, children: nodetype(*children))


class _Leaf:
    """Stands for a leaf while a structure is rebuilt."""


_LEAF = _Leaf()


def _keys():
    return keys


def _unregistered(t):
    return ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{t}`. Use "
                      "`xjax.export.register_pytree_node_serialization` or "
                      "`xjax.export.register_namedtuple_serialization`.")


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
    if t not in _SERIALIZERS:
        raise _unregistered(t)
    name, serialize_auxdata = _SERIALIZERS[t]
    children, aux = tree_util.flatten_one_level(x)
    data = serialize_auxdata(aux)
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError(f"The custom serialization function for `{t}` must return a `bytes` object. It returned a "
                         f"{type(data)}.")
    return {"custom": name, "auxdata": bytes(data).hex(), "children": [_encode(c, what) for c in children]}


def treedef_to_text(treedef, what="export"):
    """The JSON text of a treedef; TypeError naming the node type it cannot write."""
    example = tree_util.tree_unflatten(treedef, [_LEAF] * treedef.num_leaves)
    text = json.dumps(_encode(example, what), separators=(",", ":"))
    if text_to_treedef(text).num_leaves != treedef.num_leaves:
        raise TypeError(f"{what}: the pytree structure {treedef} does not survive being stored as text")
    return text


def _registered(name, data, children):
    """The node serialized under `name`, rebuilt by its registration."""
    if name not in _DESERIALIZERS:
        raise ValueError(f"Cannot deserialize a PyTreeDef containing an unregistered type `{name}`. Use "
                         "`xjax.export.register_pytree_node_serialization` or "
                         "`xjax.export.register_namedtuple_serialization`.")
    _, deserialize_auxdata, from_children = _DESERIALIZERS[name]
    return from_children(deserialize_auxdata(data), children)


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
        if set(node) == {"custom", "auxdata", "children"}:
            return _registered(str(node["custom"]), bytes.fromhex(node["auxdata"]),
                               [_decode(c) for c in node["children"]])
        if set(node) == {"namedtuple", "fields", "children"}:  # files written before registrations
            fields = json.dumps(list(node["fields"])).encode()
            return _registered(str(node["namedtuple"]), fields, [_decode(c) for c in node["children"]])
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
    return data_leaves.structure(example)  # (a key: a node over its data, as jit flattens it)
