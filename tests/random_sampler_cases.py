"""The sampler calls whose results tests/test_random_samplers.py compares with JAX's.

CASES: (label, function name, positional args after the key, keyword args, how to compare, x64).
Arrays are written ("array", values, dtype). `how` is "exact" (bit for bit), or an rtol for
floats computed through transcendental functions whose last bits may differ from XLA's.
The values JAX gives are in random_sampler_values.py, written by tools/record_random_values.py.
"""

SEEDS = (0, 42, 2**31 + 3)


def A(values, dtype="float32"):
    return ("array", values, dtype)


CASES = [
    # exact: uniform bits, integers, normal
    ("uniform", "uniform", ((),), {}, "exact", False),
    ("uniform_7", "uniform", ((7,),), {}, "exact", False),
    ("uniform_3x4", "uniform", ((3, 4),), {}, "exact", False),
    ("uniform_f16", "uniform", ((6,),), {"dtype": "float16"}, "exact", False),
    ("uniform_bf16", "uniform", ((6,),), {"dtype": "bfloat16"}, "exact", False),
    ("uniform_range", "uniform", ((5,),), {"minval": -3.3, "maxval": 7.1}, "exact", False),
    ("uniform_array_range", "uniform", ((2, 3),), {"minval": A([[0.0], [10.0]]), "maxval": A([1.0, 2.0, 30.0])},
     "exact", False),
    ("uniform_f64", "uniform", ((5,),), {"dtype": "float64"}, "exact", True),
    ("normal", "normal", ((),), {}, "exact", False),
    ("normal_7", "normal", ((7,),), {}, "exact", False),
    ("normal_3x4", "normal", ((3, 4),), {}, "exact", False),
    ("normal_f16", "normal", ((6,),), {"dtype": "float16"}, "exact", False),
    ("normal_bf16", "normal", ((6,),), {"dtype": "bfloat16"}, "exact", False),
    ("normal_f64", "normal", ((5,),), {"dtype": "float64"}, 1e-14, True),
    ("randint", "randint", ((8,), 0, 10), {}, "exact", False),
    ("randint_neg", "randint", ((2, 3), -5, 5), {}, "exact", False),
    ("randint_wide", "randint", ((4,), -2**31, 2**31 - 1), {}, "exact", False),
    ("randint_int8", "randint", ((6,), -100, 100), {"dtype": "int8"}, "exact", False),
    ("randint_uint8", "randint", ((6,), 0, 300), {"dtype": "uint8"}, "exact", False),
    ("randint_int16", "randint", ((6,), -1000, 1000), {"dtype": "int16"}, "exact", False),
    ("randint_uint32", "randint", ((6,), 0, 2**31 - 1), {"dtype": "uint32"}, "exact", False),
    ("randint_empty_range", "randint", ((3,), 5, 2), {}, "exact", False),
    ("randint_arrays", "randint", ((2, 3), A([0, 10, 20], "int32"), A([[5], [100]], "int32")), {}, "exact", False),
    ("randint_int64", "randint", ((5,), -2**40, 2**40), {"dtype": "int64"}, "exact", True),
    ("bernoulli", "bernoulli", (0.3, (10,)), {}, "exact", False),
    ("bernoulli_p", "bernoulli", (A([0.1, 0.5, 0.9]),), {}, "exact", False),
    ("bernoulli_high", "bernoulli", (0.3, (10,)), {"mode": "high"}, "exact", False),
    ("rademacher", "rademacher", ((10,),), {}, "exact", False),
    ("rademacher_f32", "rademacher", ((5,),), {"dtype": "float32"}, "exact", False),
    ("categorical", "categorical", (A([-2.3, -1.6, -0.36]),), {"shape": (8,)}, "exact", False),
    ("categorical_axis0", "categorical", (A([[0.1, 2.0, -1.0, 0.5], [1.5, -0.3, 0.7, 0.0], [0.2, 0.2, 3.0, -2.0]]),),
     {"axis": 0}, "exact", False),
    ("categorical_noreplace", "categorical", (A([0.0, 1.0, 2.0, 0.5, -1.0]),), {"shape": (3,), "replace": False},
     "exact", False),
    ("choice", "choice", (10, (5,)), {}, "exact", False),
    ("choice_noreplace", "choice", (10, (5,)), {"replace": False}, "exact", False),
    ("choice_p", "choice", (5, (8,)), {"p": A([0.1, 0.2, 0.3, 0.2, 0.2])}, "exact", False),
    ("choice_p_unnormalised", "choice", (4, (6,)), {"p": A([1.0, 2.0, 3.0, 4.0])}, "exact", False),
    ("choice_p_noreplace", "choice", (5, (3,)), {"replace": False, "p": A([0.1, 0.2, 0.3, 0.2, 0.2])}, "exact",
     False),
    ("choice_array_axis1", "choice", (A([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], "int32"), (2,)), {"axis": 1},
     "exact", False),
    ("permutation", "permutation", (10,), {}, "exact", False),
    ("permutation_rows", "permutation", (A([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], "int32"),), {}, "exact",
     False),
    ("permutation_independent", "permutation", (A([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]], "int32"),),
     {"axis": 1, "independent": True}, "exact", False),
    ("poisson_small", "poisson", (3.0, (8,)), {}, "exact", False),
    ("poisson_rates", "poisson", (A([0.0, 0.5, 4.0, 9.5]),), {}, "exact", False),
    ("poisson_large", "poisson", (A([12.0, 100.0, 1000.0]),), {}, 0.05, False),
    # floats through log / log1p (XLA's in the core): exact too; then through exp, pow, tan, ...
    ("truncated_normal", "truncated_normal", (-1.0, 2.0, (6,)), {}, "exact", False),
    ("truncated_normal_arrays", "truncated_normal", (A([-3.0, 0.0, 1.0]), A([3.0, 0.5, 4.0])), {}, 1e-6, False),
    ("exponential", "exponential", ((6,),), {}, "exact", False),
    ("laplace", "laplace", ((6,),), {}, "exact", False),
    ("logistic", "logistic", ((6,),), {}, "exact", False),
    ("gumbel", "gumbel", ((6,),), {}, "exact", False),
    ("gumbel_high", "gumbel", ((6,),), {"mode": "high"}, "exact", False),
    ("gumbel_highest", "gumbel", ((6,),), {"mode": "highest"}, "exact", False),
    ("cauchy", "cauchy", ((6,),), {}, 1e-5, False),
    ("lognormal", "lognormal", (0.5, (6,)), {}, 1e-6, False),
    ("pareto", "pareto", (3.0, (6,)), {}, 1e-6, False),
    ("weibull_min", "weibull_min", (2.0, 1.5, (6,)), {}, "exact", False),
    ("maxwell", "maxwell", ((6,),), {}, 1e-6, False),
    ("gamma", "gamma", (2.5, (6,)), {}, 1e-5, False),
    ("gamma_small_a", "gamma", (A([0.1, 0.5, 1.0, 3.0, 50.0]),), {}, "exact", False),
    ("loggamma", "loggamma", (A([0.1, 0.5, 1.0, 3.0, 50.0]),), {}, "exact", False),
    ("beta", "beta", (2.0, 3.0, (6,)), {}, 1e-5, False),
    ("dirichlet", "dirichlet", (A([1.0, 2.0, 3.0]), (2,)), {}, 1e-5, False),
    ("t", "t", (3.0, (6,)), {}, 1e-5, False),
    ("chisquare", "chisquare", (4.0, (6,)), {}, 1e-5, False),
    ("ball", "ball", (3,), {"shape": (2,)}, 1e-5, False),
    ("ball_p1", "ball", (2,), {"p": 1.0, "shape": (3,)}, 1e-5, False),
    ("multivariate_normal", "multivariate_normal",
     (A([0.0, 1.0, -1.0]), A([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]]), (2,)), {}, 1e-5, False),
    ("orthogonal", "orthogonal", (3,), {}, 1e-5, False),
    ("exponential_f64", "exponential", ((5,),), {"dtype": "float64"}, 1e-13, True),
    ("gamma_f64", "gamma", (A([0.5, 2.0, 10.0], "float64"),), {"dtype": "float64"}, 1e-12, True),
]
