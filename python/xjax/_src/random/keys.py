"""PRNG keys: typed key arrays (dtype key<fry>) over raw key data, the checks every jax.random
function applies to its key argument, and the key API (key, PRNGKey, split, fold_in, ...).

A typed key array wraps its raw key data (uint32[*shape, 2]). It is a pytree leaf, as in JAX;
transformations carry it through their traces as its data (data_leaves.py, where this module
registers keys and abstract keys). Legacy keys are the raw uint32 arrays themselves; every function
returns keys of the kind it was given.
"""
import math
import operator

import numpy as np

from xjax._src import core, data_leaves, dtypes, lax
from xjax._src.config import config
from xjax._src.lax.base import asarray
from xjax._src.numpy import creation
from xjax._src.random import prng
from xjax._src.stages import ShapeDtypeStruct


class PRNGImpl:
    """A PRNG implementation: its name, key data shape and dtype tag."""

    __slots__ = ("name", "tag", "key_shape")

    def __init__(self, name, tag, key_shape):
        self.name, self.tag, self.key_shape = name, tag, key_shape

    def __repr__(self):
        return f"PRNGImpl({self.name!r})"

    def __str__(self):
        return self.tag


THREEFRY = PRNGImpl("threefry2x32", "fry", (2,))
_IMPLS = {THREEFRY.name: THREEFRY}


class PRNGSpec:
    """Specifies a PRNG key implementation (what key_impl returns for unregistered ones)."""

    __slots__ = ("_impl",)

    def __init__(self, impl):
        self._impl = impl

    def __repr__(self):
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self):
        return str(self._impl)

    def __hash__(self):
        return hash(self._impl.name)

    def __eq__(self, other):
        return isinstance(other, PRNGSpec) and self._impl is other._impl


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed key arrays: `key<fry>` for threefry2x32 keys."""

    __slots__ = ("_impl",)

    def __init__(self, impl):
        self._impl = impl

    name = property(lambda self: f"key<{self._impl.tag}>")
    type = dtypes.prng_key  # its scalar type, as for NumPy's dtypes
    itemsize = property(lambda self: 4 * math.prod(self._impl.key_shape))

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return type(other) is KeyTy and other._impl is self._impl

    def __hash__(self):
        return hash((KeyTy, self._impl.name))


class KeyShapedArray:
    """The abstract value of a typed key array (what jax.typeof gives): its shape and key dtype."""

    __slots__ = ("shape", "dtype")
    weak_type = False
    sharding = None

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def str_short(self):
        return f"{self.dtype.name}[{','.join(str(d) for d in self.shape)}]"

    def __eq__(self, other):
        return isinstance(other, KeyShapedArray) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"ShapedArray({self.str_short()})"

    __str__ = str_short  # (print(jax.typeof(key)): key<fry>[], as JAX prints it)


def resolve_impl(spec):
    """The PRNGImpl named by `impl=` / `dtype=` arguments (None: the configured default)."""
    if spec is None:
        spec = config.jax_default_prng_impl
    if isinstance(spec, PRNGImpl):
        return spec
    if isinstance(spec, (PRNGSpec, KeyTy)):
        return spec._impl
    if isinstance(spec, str):
        if spec in _IMPLS:
            return _IMPLS[spec]
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: '
                         f'{", ".join(repr(n).replace(chr(39), chr(34)) for n in _IMPLS)}?')
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


class PRNGKeyArray:
    """An array of PRNG keys (dtype key<fry>): the key data's leading dims are the array's shape."""

    __slots__ = ("_impl", "_base_array")
    __array_priority__ = 100
    is_typed_key_array = True  # (how jnp, which random builds on, recognises key arrays)
    __hash__ = None

    def __init__(self, impl, key_data):
        self._impl = impl
        self._base_array = key_data

    def _typeof(self):  # (jax.typeof: a key type, not its data's)
        return KeyShapedArray(self.shape, self.dtype)

    shape = property(lambda self: tuple(self._base_array.shape[:-len(self._impl.key_shape)]))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    dtype = property(lambda self: KeyTy(self._impl))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.itemsize * self.size)

    def _wrap(self, data):
        return PRNGKeyArray(self._impl, data)

    def __repr__(self):
        return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}"

    __str__ = __repr__

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        return self._wrap(self._base_array[idx + (slice(None),)])

    def __bool__(self):
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
                        "jax.random.key_data(arr) if you wish to extract the underlying integer array.")

    def _compare(self, other, op):
        if not isinstance(other, PRNGKeyArray):
            raise TypeError(f"{op} does not accept dtypes {self.dtype.name}, {_dtype_name(other)}.")
        same = getattr(lax, op)(self._base_array, other._base_array)
        axis = (same.ndim - 1,)
        return lax.reduce_and(same, axis) if op == "eq" else lax.reduce_or(same, axis)

    def __eq__(self, other):
        return self._compare(other, "eq")

    def __ne__(self, other):
        return self._compare(other, "ne")

    def reshape(self, *shape, order="C"):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return self._wrap(self._base_array.reshape(tuple(shape) + self._impl.key_shape, order=order))

    def ravel(self, order="C"):
        return self.reshape((self.size,), order=order)

    flatten = ravel

    def squeeze(self, axis=None):
        axes = tuple(i for i, d in enumerate(self.shape) if d == 1) if axis is None else axis
        return self._wrap(self._base_array.squeeze(axes))

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        axes = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        return self._wrap(self._base_array.transpose(tuple(operator.index(a) % max(self.ndim, 1) for a in axes)
                                                     + (self.ndim,)))

    T = property(lambda self: self.transpose())

    def swapaxes(self, a, b):
        perm = list(range(self.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def copy(self):
        return self._wrap(self._base_array.copy())

    def block_until_ready(self):
        self._base_array.block_until_ready()
        return self


def _dtype_name(x):
    try:
        return core.get_aval(x).dtype.name
    except Exception:  # noqa: BLE001 - only for the message
        return type(x).__name__


# ---- keys in transformations: leaves carried as their data ---------------------------------------

_FLOAT0 = np.dtype([("float0", np.void, 0)])  # (ad.float0: the dtype of integer inputs' cotangents)


def _join_key(impl, data):
    """The key leaf standing where its data is: a key array over an array or a tracer, a key's
    ShapeDtypeStruct over an abstract value, a float0 array of the key's shape over a float0 one
    (the tangent or cotangent of a key, as in JAX)."""
    n = len(impl.key_shape)
    if isinstance(data, (ShapeDtypeStruct, core.ShapedArray, KeyShapedArray)):
        return ShapeDtypeStruct(data.shape[:-n], KeyTy(impl))
    if getattr(data, "dtype", None) == _FLOAT0:
        return np.zeros(np.shape(data)[:-n], _FLOAT0)
    return PRNGKeyArray(impl, data)


def _abstract_data(impl, shape):
    return ShapeDtypeStruct(tuple(shape) + impl.key_shape, np.uint32)


def _split_abstract(x):
    """An abstract key (ShapeDtypeStruct or jax.typeof's value with a key dtype) is carried as the
    abstract value of its data; other ShapeDtypeStructs are ordinary leaves."""
    if type(x.dtype) is not KeyTy:
        return None
    impl = x.dtype._impl
    return _join_key, impl, _abstract_data(impl, x.shape)


data_leaves.register(PRNGKeyArray, lambda k: (_join_key, k._impl, k._base_array))
data_leaves.register(KeyShapedArray, _split_abstract)
data_leaves.register(ShapeDtypeStruct, _split_abstract)

from xjax._src.array import Array as _Array  # noqa: E402 - (array imports this module's users)

_Array.register(PRNGKeyArray)  # isinstance(key, jax.Array) holds for typed keys, as in JAX


# ---- the key argument of every random function ----------------------------------------------------

def check_key_data(impl, data):
    """TypeError (as JAX's) unless `data` can be the key data of `impl` keys."""
    if not all(hasattr(data, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype "
                        f"attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim={data.ndim}")
    n = len(impl.key_shape)
    if tuple(data.shape[-n:]) != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end with "
                        f"{impl.key_shape}; got shape={tuple(data.shape)} for impl={impl!r}")
    if data.dtype != np.uint32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                        f"got dtype={data.dtype}")


def _is_arraylike(x):
    return isinstance(x, (np.ndarray, np.generic, core.Tracer)) or type(x) in core.ARRAY_TYPES \
        or isinstance(x, (int, float, bool, complex))


_U32 = np.dtype(np.uint32)


def check_key(name, key, allow_batched=False):
    """(raw key data, whether `key` was typed) of the key argument of random function `name`."""
    if type(key) in core.ARRAY_TYPES and key.aval.shape == (2,) and key.aval.dtype == _U32:
        return key, False  # the common case, checked first: one legacy key
    if type(key) is PRNGKeyArray:
        data, typed = key._base_array, True
    elif _is_arraylike(key):
        check_key_data(THREEFRY, key)
        data, typed = (asarray(key) if isinstance(key, np.ndarray) else key), False
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and data.ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape {_key_shape(key)} != (). "
                         "Use jax.vmap for batching.")
    return data, typed


def _key_shape(key):
    return key.shape if type(key) is PRNGKeyArray else tuple(np.shape(key))


def returned_keys(typed, data, impl=THREEFRY):
    return PRNGKeyArray(impl, data) if typed else data


# ---- the key API ---------------------------------------------------------------------------------

def _seed_array(seed):
    """A Python int seed goes through int64, as JAX's (x32 keeps its low 32 bits; JAX too)."""
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = np.int64(seed)
    if isinstance(seed, (np.ndarray, np.generic)) and seed.dtype.kind not in "biufc":
        raise TypeError(f"Value {seed!r} with dtype {seed.dtype} is not a valid JAX array type. Only arrays of "
                        "numeric types are supported by JAX.")
    if isinstance(seed, str):
        raise TypeError(f"Value {seed!r} with dtype <U{len(seed)} is not a valid JAX array type. Only arrays of "
                        "numeric types are supported by JAX.")
    seeds = creation.asarray(seed)
    offset = config.jax_random_seed_offset
    return seeds + offset if offset else seeds


def _make_key(ctor_name, seed, impl_spec):
    impl = resolve_impl(impl_spec)
    if type(seed) is PRNGKeyArray:
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape {np.shape(seed)} != (). "
                        "Use jax.vmap for batching")
    seeds = _seed_array(seed)
    if not dtypes.is_int(core.get_aval(seeds).dtype):
        raise TypeError(f"PRNG key seed must be an integer; got {seeds!r}")
    return impl, prng.random_seed(seeds)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (a 0-d array of dtype key<fry>) from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    impl, data = _make_key("key", seed, impl)
    return PRNGKeyArray(impl, data)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's name
    """A legacy PRNG key: the uint32[2] key data of an integer seed."""
    return _make_key("PRNGKey", seed, impl)[1]


def split(key, num=2):
    """`num` new keys (an int or a shape) from one key, along new leading axes."""
    data, typed = check_key("split", key)
    if isinstance(num, (tuple, list)):
        shape = tuple(operator.index(d) for d in num)
    else:
        shape = (operator.index(num),)
    return returned_keys(typed, prng.random_split(data, shape))


def fold_in(key, data):
    """A new key from a key and a 32-bit integer."""
    kdata, typed = check_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, int):  # NumPy's range check and message, as jnp.asarray(data, uint32) in JAX
        data = np.array(data, np.uint32)
    return returned_keys(typed, prng.random_fold_in(kdata, creation.asarray(data, dtype=np.uint32)))


def clone(key):
    """A copy of the key (for key-reuse checking, which xjax does not do: the key itself)."""
    return key


def key_data(keys):
    """The raw uint32 key data under a key array."""
    data, _ = check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """A typed key array over raw uint32 key data."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
        impl = dtype
    impl = resolve_impl(impl)
    if isinstance(key_bits_array, np.ndarray):
        key_bits_array = asarray(key_bits_array)
    check_key_data(impl, key_bits_array)
    return PRNGKeyArray(impl, key_bits_array)


def key_impl(keys):
    """The name of the keys' PRNG implementation."""
    check_key("key_impl", keys, allow_batched=True)
    impl = keys._impl if type(keys) is PRNGKeyArray else THREEFRY
    return impl.name if impl.name in _IMPLS else PRNGSpec(impl)


def key_dtype(impl=None):
    """The dtype of typed keys of an implementation."""
    return KeyTy(resolve_impl(impl))


def default_prng_impl():
    """The PRNG implementation of keys made without `impl=`."""
    return resolve_impl(None)
