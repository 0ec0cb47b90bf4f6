"""Known bugs that generated programs hit, being fixed elsewhere: a finding matching one of these is
labelled with its name in reports (the long run still generates and reports them)."""
import re


def _has(tags, *names):
    return all(n in tags for n in names)


def _grad_level(tags):
    return any(t in tags for t in ("L_grad", "L_value_and_grad", "L_vjp", "L_jacrev", "L_custom_vjp", "inner_grad",
                                   "inner_value_and_grad"))


KNOWN = [
    # JAX's own bugs and quirks (not xjax's)
    ("JAX:lax_map_batch_zero_dim", "JAX's lax.map(batch_size=) over an array with an empty non-leading axis raises "
     "ZeroDivisionError", lambda tags, kind, detail: "JAX raised ZeroDivisionError: integer modulo by zero" in detail),
    # by what xjax said first
    ("reshape_transpose", "grad of vmap(grad) with in_axes=(None, 0): _reshape_transpose reshape error",
     lambda tags, kind, detail: "_reshape_transpose" in detail),
    ("associative_scan", "lax.associative_scan missing",
     lambda tags, kind, detail: "associative_scan" in detail),
    ("cond_custom_jvp_closure", "jit(grad) of cond whose branch calls a custom_jvp fn closing over an array constant "
     "(KeyError Var; also a custom_jvp rule making an array constant inside scan/map)",
     lambda tags, kind, detail: "KeyError: Var" in detail),
    ("at_mul_grad", "grad of x.at[i].mul(y) w.r.t. y",
     lambda tags, kind, detail: "scatter_mul gradients" in detail or ("at_mul" in tags and _grad_level(tags)
                                                                       and kind == "wrong value")),
    ("collective_in_scan_in_vmap", "psum/pmax inside a scan inside vmap(axis_name=...); also axis_index in any "
     "control flow whose operands are not batched (NameError under jit)",
     lambda tags, kind, detail: "ran outside the vmap or pmap" in detail or "unbound axis name" in detail),
    ("grad_pmax", "grad of pmax",
     lambda tags, kind, detail: ("pmax" in tags or "pmin" in tags) and (
         "Differentiation rule for 'pm" in detail or _grad_level(tags | {"L_jvp"}))),
    ("lax_map_empty_batch", "lax.map with a zero-length leading axis and batch_size",
     lambda tags, kind, detail: "lax_map_batch_empty" in tags),
    ("linearize_traced_loop", "linearize of while_loop/fori_loop with traced bounds",
     lambda tags, kind, detail: "Reverse-mode differentiation does not work" in detail and "xjax raised" in detail
     and any(t in tags for t in ("L_linearize", "L_jvp", "L_jacfwd", "inner_jvp"))),
    ("while_reverse_eager", "grad/vjp through while_loop raises when linearizing, even where no cotangent reaches "
     "the loop (JAX raises at transposition); the partial-eval rule of known bug linearize_traced_loop",
     lambda tags, kind, detail: "Reverse-mode differentiation does not work" in detail and "xjax raised" in detail),
    ("weak_type_grad_dtype", "weak-type dtype differences of grad results",
     lambda tags, kind, detail: kind == "wrong dtype/shape" and ("weak_type" in detail or "python_scalar_arg" in tags)),
    ("int_div_by_zero", "integer remainder/floor_divide by zero",
     lambda tags, kind, detail: "int_div_by_var" in tags and kind == "wrong value"),
    ("collective_nested", "collectives inside control flow inside vmap(axis_name=...) (as collective_in_scan_in_vmap)",
     lambda tags, kind, detail: "collective_nested" in tags and kind != "crash"),
    # found by these programs, reported, not fixed (see tests/test_composition_findings.py's notes)
    ("NEW:custom_vjp_jvp_unexecuted", "jvp through a custom_vjp call that does not run (an untaken cond branch, a "
     "loop body): JAX raises when it compiles the program, xjax only if the call runs",
     lambda tags, kind, detail: "xjax computed it" in detail and "can't apply forward-mode autodiff" in detail),
    ("NEW:custom_lin_jvp_order", "forward mode reaches a custom_vjp's custom_lin in another order than JAX's: "
     "NotImplementedError for custom_lin's JVP where JAX raises its TypeError (both refuse)",
     lambda tags, kind, detail: "Differentiation rule for 'custom_lin'" in detail and "forward-mode" in detail),
    ("NEW:custom_vjp_unbatched_output", "custom_vjp under vmap with an output that does not depend on the batch: "
     "JAX gives bwd that output's cotangent summed over the batch, xjax the per-example one",
     lambda tags, kind, detail: kind == "wrong value" and "L_custom_vjp" in tags and "L_vmap" in tags),
]


def known_bug(tags, kind, detail):
    """The name of the known bug this finding probably is, or None."""
    tags = set(tags)
    for name, _, pred in KNOWN:
        if pred(tags, kind, detail):
            return name
    return None


def first_line(detail):
    return re.sub(r"\s+", " ", detail.strip().splitlines()[0])[:200] if detail.strip() else ""
