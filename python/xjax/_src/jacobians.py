"""Jacobians and Hessians (jacfwd, jacrev, hessian): jvp or vjp vmapped over a standard basis, laid
out as JAX lays them out. Built on autodiff and vmap, and on jnp for the basis and the layout."""
import numpy as np

from xjax._src import core, dtypes, tree_util
from xjax._src.autodiff import _argnums_tuple, _as_operand, _dynamic_args, float0, jvp, vjp
from xjax._src.interpreters import ad
from xjax._src.lax.elementwise import _convert, convert_element_type_p
from xjax._src.numpy import creation, manipulation
from xjax._src.vmap import vmap


def _possible_downcast(x, example, always):
    """x as example's dtype and weak type. With `always`, a traced convert is an equation even when
    nothing changes, as JAX's basis conversion is (it names a sharding other than its operand's)."""
    aval = core.get_aval(example)
    if always and isinstance(x, core.Tracer):
        return convert_element_type_p.bind(x, new_dtype=aval.dtype, weak_type=aval.weak_type, sharding=None)
    return _convert(x, aval.dtype, aval.weak_type)


def _unravel_array_into_pytree(pytree, axis, example, arr):
    """arr split along `axis` into the leaves of pytree (their shapes in place of that axis), each
    converted to example's type (or its leaf's, when example is None: the basis, always converted):
    JAX's Jacobian layout."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    shape = core.get_aval(arr).shape
    shapes = [shape[:axis] + np.shape(leaf) + shape[axis + 1:] for leaf in leaves]
    parts = manipulation.split(arr, np.cumsum([np.size(leaf) for leaf in leaves[:-1]]).astype(int), axis)
    out = [_possible_downcast(manipulation.reshape(x, s), leaf if example is None else example, example is None)
           for x, s, leaf in zip(parts, shapes, leaves)]
    return treedef.unflatten(out)


def _std_basis(pytree):
    """The identity over all the leaves' elements, laid out as pytree (each leaf with a leading axis)."""
    leaves = tree_util.tree_leaves(pytree)
    n = sum(int(np.size(leaf)) for leaf in leaves)
    dtype = dtypes.result_type(*[core.get_aval(leaf).dtype for leaf in leaves])
    return _unravel_array_into_pytree(pytree, 1, None, creation.eye(n, dtype=dtype))


def _float0_as_zeros(primal, t):
    """A float0 tangent (of an integer value) as zeros of the value's dtype, as JAX's Jacobians give them."""
    if getattr(t, "dtype", None) != float0:
        return t
    return ad.zeros_like_aval(core.get_aval(_as_operand(primal)))


def _check_output(name, out, holomorphic):
    dtype = core.get_aval(out).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, but got {dtype.name}.")
    elif name == "jacrev" and dtypes.is_complex(dtype):
        raise TypeError(f"jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but "
                        f"got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        "differentiation of non-holomorphic functions involving complex outputs, use jax.vjp directly.")
    elif name == "jacrev" and not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {dtype.name}. For differentiation of functions with integer outputs, use jax.vjp "
                        "directly.")


def _check_jacobian_inputs(name, dyn, holomorphic):
    """Non-holomorphic Jacobians take real inputs only (JAX's rule: a complex input needs holomorphic=True
    or jax.jvp / jax.vjp directly)."""
    if holomorphic:
        return
    for x in tree_util.tree_leaves(dyn):
        dtype = core.get_aval(x).dtype
        if dtypes.is_complex(dtype):
            raise TypeError(f"{name} requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
                            f"but got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                            "differentiation of non-holomorphic functions involving complex inputs or integer "
                            f"inputs, use jax.{'jvp' if name == 'jacfwd' else 'vjp'} directly.")


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of fun by forward mode: jvp vmapped over the standard basis of the inputs (JAX's
    construction: the basis an identity split into the inputs, the Jacobian split back along its
    last axis)."""
    nums, single = _argnums_tuple(argnums)

    def jac_f(*args, **kwargs):
        f_of_dyn, dyn = _dynamic_args("jacfwd", fun, nums, args, kwargs, False, holomorphic)
        _check_jacobian_inputs("jacfwd", dyn, holomorphic)
        dyn = tree_util.tree_map(_as_operand, dyn)

        def push(basis):
            res = jvp(f_of_dyn, dyn, basis, has_aux=has_aux)
            return (res[0], tree_util.tree_map(_float0_as_zeros, res[0], res[1]), *res[2:])

        res = vmap(push, out_axes=(None, -1, None) if has_aux else (None, -1))(_std_basis(dyn))
        y, jac = res[0], res[1]
        for o in tree_util.tree_leaves(y):
            _check_output("jacfwd", o, holomorphic)
        example = dyn[0] if single else dyn
        jac_tree = tree_util.tree_map(
            lambda y_leaf, arr: _unravel_array_into_pytree(example, core.get_aval(arr).ndim - 1, y_leaf, arr), y, jac)
        return (jac_tree, res[2]) if has_aux else jac_tree

    return jac_f


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of fun by reverse mode: the vjp vmapped over the standard basis of the outputs (JAX's
    construction: the Jacobian of each input split along its leading axis into the outputs)."""
    nums, single = _argnums_tuple(argnums)

    def jac_f(*args, **kwargs):
        f_of_dyn, dyn = _dynamic_args("jacrev", fun, nums, args, kwargs, allow_int, holomorphic)
        _check_jacobian_inputs("jacrev", dyn, holomorphic)
        res = vjp(f_of_dyn, *dyn, has_aux=has_aux)
        y, vjp_fn = res[0], res[1]
        y = tree_util.tree_map(_as_operand, y)
        for o in tree_util.tree_leaves(y):
            _check_output("jacrev", o, holomorphic)

        def pull(ct):
            return tree_util.tree_map(_float0_as_zeros, dyn, vjp_fn(ct))

        jac = vmap(pull)(_std_basis(y))
        jac = jac[0] if single else jac
        example = dyn[0] if single else dyn
        jac_tree = tree_util.tree_map(lambda x_leaf, arr: _unravel_array_into_pytree(y, 0, x_leaf, arr), example, jac)
        jac_tree = tree_util.tree_transpose(tree_util.tree_structure(example), tree_util.tree_structure(y), jac_tree)
        return (jac_tree, res[2]) if has_aux else jac_tree

    return jac_f


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of scalar fun: jacfwd of jacrev."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux,
                  holomorphic=holomorphic)
