"""The programs of tests/test_sharding_types.py: written once against JAX's API, so that the same code
records JAX 0.10.2's jaxprs (tests/tools/record_sharding_types.py) and runs under xjax."""


def programs(jax, jnp, np, P, NamedSharding, AxisType):
    """{name: the text of make_jaxpr of the program (or 'ErrorType: first line' of what it raised)}, over a
    2x2 mesh of Explicit axes set by jax.set_mesh (and one program without it)."""
    mesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
    amesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    put = lambda a, *spec: jax.device_put(a, NamedSharding(mesh, P(*spec)))
    x = put(np.arange(32, dtype=np.float32).reshape(8, 4) / 10, "X", None)
    w = put(np.arange(24, dtype=np.float32).reshape(4, 6) / 10, None, "Y")
    v = put(np.arange(8, dtype=np.float32), "X")
    z = put(np.arange(32, dtype=np.float32).reshape(4, 8), None, "X")
    xy = put(np.zeros((8, 4), np.float32), None, "Y")
    yx = put(np.zeros((8, 4), np.float32), "Y", None)
    a3 = put(np.ones((4, 2, 3), np.float32), "X")
    b3 = put(np.ones((4, 3, 2), np.float32), "X")
    c3 = put(np.ones((4, 3, 2), np.float32), "Y")
    plain = np.ones((8, 4), np.float32)
    typeofs = []
    progs = {
        "main": (lambda x, w: jax.reshard(jnp.sin(x @ w).sum(axis=0), P()), x, w),
        "grad": (jax.grad(lambda x: (x * x).sum()), x),
        "typeof": (lambda x: (typeofs.append(f"{jax.typeof(x)} {jax.typeof(x * 2)} {jax.typeof(x.T)}"), x)[1], x),
        "vmap": (jax.vmap(lambda r: r * 2.0), x),
        "vmap_in_axes_1": (jax.vmap(lambda r: r.sum(), in_axes=1), x),
        "wsc_explicit_assert": (lambda x: jax.lax.with_sharding_constraint(x * 2, P(None, "Y")), x),
        "reshard": (lambda x: jax.reshard(x, P(None, "X")), x),
        "reshard_named": (lambda x: jax.reshard(x, NamedSharding(mesh, P(None, "Y"))), x),
        "reshard_unsharded": (lambda x: jax.reshard(x, P(None, "Y")), plain),
        "reshard_bad_axis": (lambda x: jax.reshard(x, P(None, "Z")), x),
        "vmap_reshard": (jax.vmap(lambda r: jax.reshard(r, P("Y"))), x),
        "transpose": (lambda x: x.T, x),
        "reshape_split": (lambda x: x.reshape(8, 2, 2), x),
        "reshape_merge": (lambda x: x.reshape(32), x),
        "reshape_refused": (lambda x: x.reshape(2, 16), x),
        "reshape_refused_minor": (lambda x: x.reshape(4, 8), xy),
        "broadcast": (lambda v: v[:, None] * jnp.ones((8, 4)), v),
        "contracting_split_needs_out_sharding": (lambda x, z: x.T @ z.T, x, z),
        "contracting_split_out_sharding": (lambda x, z: jax.lax.dot_general(z, x, (([1], [0]), ([], [])),
                                                                              out_sharding=P("X", None)), x, z),
        "dot_batch": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), a3, b3),
        "dot_batch_conflict": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), a3, c3),
        "dot_illegal_result": (lambda a, b: a @ b, put(np.ones((4, 4), np.float32), "X"),
                               put(np.ones((4, 4), np.float32), None, "X")),
        "add_merges_splits": (lambda x, y: x + y, x, xy),
        "add_conflict": (lambda x, y: x + y, x, yx),
        "reduce_max": (lambda x: jnp.max(x, axis=1), x),
        "argmax": (lambda x: jnp.argmax(x, axis=0), x),
        "grad_mlp": (jax.grad(lambda w, x: jnp.tanh(x @ w).sum()), w, x),
        "concatenate": (lambda x: jnp.concatenate([x, x], axis=1), x),
        "concatenate_split_dim": (lambda x: jnp.concatenate([x, x], axis=0), x),
        "slice": (lambda x: x[2:6, 1:], x),
        "slice_indivisible": (lambda x: jax.reshard(x[:3], P("X", None)), x),
        "cumsum_split_axis": (lambda x: jnp.cumsum(x, axis=0), x),
        "convert": (lambda x: x.astype(jnp.int32), x),
        "squeeze": (lambda x: jnp.squeeze(x.reshape(8, 1, 4), 1), x),
        "expand_dims": (lambda x: jnp.expand_dims(x, 0), x),
        "sort_split_dim": (lambda x: jnp.sort(x, axis=0), x),
        "select_n": (lambda x: jax.lax.select(x > 1, x, x), x),
        "integer_pow": (lambda x: x ** 2, x),
        "shard_map_infer": (lambda x: jax.shard_map(lambda b: b * 2, out_specs=P("X", None))(x), x),
        "wsc_auto": (lambda x: jax.lax.with_sharding_constraint(x * 2, NamedSharding(amesh, P("X", None))), plain),
        "grad_wsc_auto": (jax.grad(lambda x: jax.lax.with_sharding_constraint(
            x * 2, NamedSharding(amesh, P("X", None))).sum()), plain),
        "jit": (jax.jit(lambda x: jnp.tanh(x) + 1.0), x),
        "zeros_like": (lambda x: jnp.zeros_like(x), x),
        "where": (lambda x: jnp.where(x > 1, x, 0.0), x),
        "einsum_out_sharding": (lambda x, z: jnp.einsum("ij,jk->ik", z, x, out_sharding=P(None, None)), x, z),
        "vmap_typeof": (jax.vmap(lambda r: (typeofs.append(str(jax.typeof(r))), r * 2)[1], in_axes=1), x),
        "vmap_dot_out_sharding": (jax.vmap(lambda a, b: jax.lax.dot_general(
            a, b, (([1], [0]), ([], [])), out_sharding=P(None, "Y"))), a3, b3),
        "vmap_grad": (jax.vmap(jax.grad(lambda r: jnp.sin(r).sum())), x),
        "jit_of_grad": (lambda x: jax.jit(jax.grad(lambda y: (y * 2).sum()))(x), x),
    }
    out = {}
    def text(f, *args):
        try:
            return str(jax.make_jaxpr(f)(*args))
        except Exception as e:
            return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    with jax.set_mesh(mesh):
        for name, (f, *args) in progs.items():
            out[name] = text(f, *args)
    out["typeof_strings"] = " | ".join(typeofs)
    out["grad_no_mesh_set"] = text(jax.grad(lambda x: (x * x).sum()), x)
    out["typeof_array"] = str(jax.typeof(x))
    return out
