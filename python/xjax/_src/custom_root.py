"""lax.custom_root: a root of f found by any solver, differentiated by the implicit function theorem.

The solution x* of f(x*, theta) = 0 (theta: what f closes over) moves with theta as
dx* = -(df/dx)^-1 (df/dtheta . dtheta): the JVP computes the tangent of f at x* with respect to
theta and hands it to tangent_solve with the linearisation of f at x*, never differentiating the
solver (whose loops need not be differentiable). The guess gets no derivative.
"""
from xjax._src import tree_util
from xjax._src.autodiff import jvp, linearize
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.custom_gradient import closure_convert
from xjax._src.lax.elementwise import full_like


def _check_tree(what, got, want, has_aux):
    if has_aux:
        if not (isinstance(got, tuple) and len(got) == 2):
            raise TypeError(f"{what}() with has_aux=True must return a pair (solution, aux)")
        got = got[0]
    if tree_util.tree_structure(got) != want:
        raise TypeError(f"{what}() output pytree structure must match initial_guess, got "
                        f"{tree_util.tree_structure(got)} and {want}.")


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """solve(f, initial_guess): a root of f, differentiable through what f closes over.
    tangent_solve(g, y) must solve the linear system g(x) = y (g: f linearised at the root);
    with has_aux, solve returns (solution, aux) and aux gets no derivative."""
    guess_tree = tree_util.tree_structure(initial_guess)
    _check_tree("f", f(initial_guess), guess_tree, False)
    f_fun, f_consts = closure_convert(f, initial_guess)
    solve_fun, solve_consts = closure_convert(lambda x: solve(f, x), initial_guess)
    _check_tree("solve", solve_fun(initial_guess, *solve_consts), guess_tree, has_aux)

    def linearize_and_solve(x, b):
        return tangent_solve(linearize(f, x)[1], b)

    ls_fun, ls_consts = closure_convert(linearize_and_solve, initial_guess, initial_guess)

    @custom_jvp
    def root(f_consts, solve_consts, ls_consts, guess):
        return solve_fun(guess, *solve_consts)

    @root.defjvp
    def root_jvp(primals, tangents):
        f_consts, _, ls_consts, _ = primals
        out = root(*primals)
        solution = out[0] if has_aux else out
        _, rhs = jvp(lambda *c: f_fun(solution, *c), tuple(f_consts), tuple(tangents[0]))
        dx = tree_util.tree_map(lambda t: -t, ls_fun(solution, rhs, *ls_consts))
        if has_aux:
            return out, (dx, tree_util.tree_map(lambda a: full_like(a, 0), out[1]))
        return out, dx

    return root(list(f_consts), list(solve_consts), list(ls_consts), initial_guess)
