"""More programs of the sharding-types tests (tests/test_sharding_types_more.py): indexing, scatter,
dynamic slices, convolution, linear algebra, split, top_k and the out_sharding arguments, written once
against JAX's API so that the same code records JAX 0.10.2's jaxprs and runs under xjax."""


def programs(jax, jnp, np, P, NamedSharding, AxisType):
    """{name: the text of make_jaxpr of the program (or 'ErrorType: first line' of what it raised)}, over a
    2x2 mesh of Explicit axes set by jax.set_mesh."""
    mesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
    put = lambda a, *spec: jax.device_put(a, NamedSharding(mesh, P(*spec)))
    x = put(np.arange(32, dtype=np.float32).reshape(8, 4) / 10, "X", None)
    w = put(np.arange(24, dtype=np.float32).reshape(4, 6) / 10, None, "Y")
    xy = put(np.ones((8, 4), np.float32), None, "Y")
    ids = np.array([3, 0, 2], np.int32)  # (an argument: traced, as JAX's and xjax's indexing normalise it alike)
    sids = put(np.array([3, 0, 2, 1], np.int32), "Y")
    img = put(np.ones((4, 3, 6, 6), np.float32), "X")
    ker = np.ones((2, 3, 3, 3), np.float32)
    spd = np.eye(3, dtype=np.float32) * 4 + 1
    stack = put(np.stack([spd] * 4), "X")
    rhs = put(np.ones((4, 3, 2), np.float32), "X")
    out = {}

    def attempt(thunk):
        try:
            return str(thunk())
        except Exception as e:
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"

    def text(f, *args):
        return attempt(lambda: jax.make_jaxpr(f)(*args))

    def types(f, *args):
        """The types of f's results (programs whose jaxprs JAX builds from other equations than xjax's)."""
        got = []

        def typed(*a):
            r = f(*a)
            got.extend(str(jax.typeof(o)) for o in jax.tree.leaves(r))
            return r
        return attempt(lambda: (jax.make_jaxpr(typed)(*args), " ".join(got))[1])

    progs = {
        "index_int_unsplit_dim": (lambda x: x[:, 2], x),
        "index_int_split_dim": (lambda x: x[2], x),
        "index_array": (lambda w, i: w[i], w, ids),
        "index_array_split_dim": (lambda x, i: x[i], x, ids),
        "index_array_columns": (lambda x, i: x[:, i], x, ids),
        "index_split_ids": (lambda w: w[:, sids], w),
        "at_add": (lambda w, i: w.at[i].add(1.0), w, ids),
        "at_set_split_dim": (lambda x, i: x.at[i].set(0.0), x, ids),
        "at_set_columns": (lambda x, i: x.at[:, i].set(0.0), x, ids),
        "dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x, (i, 0), (4, 2)), x, np.int32(1)),
        "dynamic_slice_indivisible": (lambda x, i: jax.lax.dynamic_slice(x, (i, 0), (3, 2)), x, np.int32(1)),
        "dynamic_update_slice": (lambda x: jax.lax.dynamic_update_slice(x, x[:4] * 2, (2, 0)), x),
        "dynamic_update_slice_mismatch": (lambda x, w: jax.lax.dynamic_update_slice(x, w[:, :4], (2, 0)), x, w),
        "conv_batch_split": (lambda a: jax.lax.conv_general_dilated(a, ker, (1, 1), "SAME"), img),
        "cholesky": (types, lambda a: jnp.linalg.cholesky(a), stack),
        "solve": (types, lambda a, b: jnp.linalg.solve(a, b), stack, rhs),
        "triangular_solve": (lambda a, b: jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
                             stack, rhs),
        "eigh": (types, lambda a: jnp.linalg.eigh(a), stack),
        "qr": (types, lambda a: jnp.linalg.qr(a), stack),
        "split": (lambda x: jnp.split(x, 2, axis=1), x),
        "top_k": (types, lambda x: jax.lax.top_k(x, 2), x),
        "select_which_conflict": (lambda x, y: jax.lax.select(x > 1, y, y), x, xy),
        "select_cases_conflict": (lambda x, y: jax.lax.select(x > 1, x, y), x, xy),
        "matmul_out_sharding": (lambda x, w: jnp.matmul(x, w, out_sharding=P(None, "Y")), x, w),
        "dot_out_sharding": (lambda x, w: jnp.dot(x, w, out_sharding=P("X", None)), x, w),
        "reshape_out_sharding": (lambda x: jnp.reshape(x, (2, 16), out_sharding=P("X", None)), x),
        "lax_reshape_out_sharding": (lambda x: jax.lax.reshape(x, (4, 8), out_sharding=P(None, "Y")), x),
        "zeros_out_sharding": (lambda x: x + jnp.zeros((8, 4), out_sharding=P("X", None)), x),
        "arange_out_sharding": (lambda: jnp.arange(8.0, out_sharding=P("X")),),
    }
    with jax.set_mesh(mesh):
        for name, (f, *args) in progs.items():
            out[name] = types(*args) if f is types else text(f, *args)
        spec = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("X", None)))
        out["shape_dtype_struct_make_jaxpr"] = text(lambda a: a.sum(axis=1), spec)
        out["shape_dtype_struct_trace"] = attempt(lambda: jax.jit(lambda b: jnp.sin(b).sum(axis=0)).trace(spec).jaxpr)
        out["shape_dtype_struct_eval_shape"] = attempt(lambda: jax.eval_shape(lambda b: b * 2, spec).sharding.spec)
    return out
