"""_core.cuda_plan: a graph compiled for CUDA, each step in its GPU form (what gpu/cuda.py runs).
No GPU needed: this checks the plan's structure; test_cuda_executor runs plans."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import _core, lax
from xjax._src.interpreters.graph_lowering import lower_closed_jaxpr


def plan_of(fun, *args):
    graph, outs, _, _ = lower_closed_jaxpr(xjax.make_jaxpr(fun)(*args))
    graph.set_outputs(list(dict.fromkeys(outs)))
    return _core.cuda_plan(graph)


def kinds(plan):
    return [(s["kind"], s["op"]) for s in plan["steps"]]


X = np.ones((4, 8), np.float32)


def test_elementwise_chains_and_reductions_are_one_fused_kernel():
    plan = plan_of(lambda x: jnp.sum(jnp.sin(x) * 2 + 1, axis=1), X)
    assert kinds(plan) == [("fused", "reduce_sum")]
    step = plan["steps"][0]
    assert "xjax_fused" in step["kernel"]["source"] and step["kernel"]["launches"]
    assert [plan["storages"][plan["storage"][v]][0] for v in step["inputs"]] == ["param"]


def test_a_lone_elementwise_op_gets_a_fused_kernel_not_the_cpu_one():
    plan = plan_of(lambda x, y: x + y, X, X)
    assert kinds(plan) == [("fused", "add")]
    assert plan["steps"][0]["kernel"]["launches"][0]["params"] == ["in0", "in1", "out0"]


def test_library_steps_carry_their_op_and_attributes():
    plan = plan_of(lambda x, w: x @ w, X, X.T)
    (step,) = plan["steps"]
    assert (step["kind"], step["op"], step["kernel"]) == ("library", "dot_general", None)
    assert list(step["attrs"]["lhs_contracting_dimensions"]) == [1]
    img, ker = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
    (conv,) = plan_of(lambda a, b: lax.conv(a, b, (1, 1), "SAME"), img, ker)["steps"]
    assert conv["kind"] == "library" and "xjax_im2col" in conv["kernel"]["source"]
    sort = plan_of(lambda x: lax.top_k(x, 3), X)["steps"]
    assert [(s["kind"], s["op"], s["attrs"]["k"]) for s in sort] == [("library", "top_k", 3)]


def test_control_flow_holds_subplans_and_constants_their_bytes():
    # More than 1024 elements: a lone op over fewer is a fused program, its 1.0 inlined.
    x = np.ones((40, 32), np.float32)
    row = jnp.asarray(np.arange(32, dtype=np.float32))
    plan = plan_of(lambda p, x: lax.cond(p, lambda t: t + row, lambda t: t - 1, x), True, x)
    (step,) = [s for s in plan["steps"] if s["kind"] == "cond"]
    assert len(step["subs"]) == 2 and all(sub["steps"] for sub in step["subs"])
    # Branch 0 is the false one, t - 1: its 1.0 is a constant, given as its bytes.
    assert step["subs"][0]["constants"] == [(((), "float32"), np.float32(1.0).tobytes())]
    assert step["subs"][1]["params"] == [((32,), "float32"), ((40, 32), "float32")]  # (row: an operand)


def test_layout_ops_and_contiguous_windows_run_their_kernels():
    plan = plan_of(lambda x, i: (x.T, lax.dynamic_slice(x, (i, 0), (2, 8))), X, np.int32(1))
    steps = kinds(plan)
    assert ("kernel", "dynamic_slice") in steps and ("kernel", "transpose") in steps  # (and the index's clamp)


def all_reduce_graph():
    """A graph whose one op, all_reduce (MPI between processes), has no GPU route."""
    g = _core.Graph()
    x = g.parameter((4,), "float32")
    g.set_outputs(g.add("all_reduce", [x], {"reduction": "sum", "signature": " " * 256}))
    return g


def test_linalg_ops_are_library_steps():
    a = np.eye(3, dtype=np.float32)
    assert kinds(plan_of(lambda x: lax.linalg.cholesky(x, symmetrize_input=False), a)) == [("library", "cholesky")]
    steps = kinds(plan_of(lambda x: (lax.linalg.lu(x), lax.linalg.qr(x), lax.linalg.eigh(x, symmetrize_input=False),
                                     lax.linalg.svd(x), lax.linalg.triangular_solve(x, x)), a))
    assert {op for kind, op in steps if kind == "library"} >= {"lu", "qr", "eigh", "svd", "triangular_solve"}
    (step,) = plan_of(lambda x: lax.linalg.qr(x, pivoting=True, full_matrices=False), a)["steps"]
    assert step["kind"] == "library" and len(step["outputs"]) == 3 and step["attrs"]["pivoting"]


def test_ops_without_a_gpu_route_fail_at_compile_time_naming_the_op():
    with pytest.raises(NotImplementedError, match=r"^\[cuda\] no GPU kernel for op 'all_reduce' "):
        _core.cuda_plan(all_reduce_graph())


def test_special_functions_fuse_and_only_their_kernels_carry_their_definitions():
    special = _core.scalar_special_source()
    plan = plan_of(lambda x: jnp.sum(xjax.scipy.special.digamma(x) * 2, axis=1), X)
    assert kinds(plan) == [("fused", "reduce_sum")]
    assert special in plan["steps"][0]["kernel"]["source"]
    (step,) = plan_of(lambda a, x: lax.igamma(a, x), X, X)["steps"]  # a lone op: its own fused kernel
    assert step["kind"] == "fused" and special in step["kernel"]["source"]
    (step,) = plan_of(lambda x: jnp.sin(x), X)["steps"]
    assert special not in step["kernel"]["source"] and _core.scalar_source() in step["kernel"]["source"]
