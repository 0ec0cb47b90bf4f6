"""The core's attribute errors, the same in every op family (src/core/ops/op_attrs.h): a required
attribute that is missing is a ValueError, one of the wrong type a TypeError, both naming the op
and the attribute."""
import pytest

from xjax import _core

F23 = ((2, 3), "float32")
F5 = ((5,), "float32")
IMG = ((1, 1, 5, 5), "float32")
KER = ((1, 1, 3, 3), "float32")
CONV = dict(lhs_spec=[0, 1, 2, 3], rhs_spec=[0, 1, 2, 3], out_spec=[0, 1, 2, 3])
GATHER = dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], slice_sizes=[1, 3])
WINDOW = dict(window_dimensions=[1, 1, 2, 2])

# (op, operand types, valid attributes, the attribute to break, a value of the wrong type, what it must be)
FAMILIES = [
    ("integer_pow", [F23], dict(y=2), "y", 2.5, "an int"),
    ("convert_element_type", [F23], dict(new_dtype="int32"), "new_dtype", 3, "a dtype name"),
    ("iota", [], dict(dtype="int32", shape=[3], dimension=0), "shape", 3, "a sequence of ints"),
    ("reduce_sum", [F23], dict(axes=[0]), "axes", 0, "a sequence of ints"),
    ("argmax", [F23], dict(axes=[1], index_dtype="int32"), "index_dtype", 3, "a dtype name"),
    ("cumsum", [F23], dict(axis=1), "axis", [1], "an int"),
    ("transpose", [F23], dict(permutation=[1, 0]), "permutation", 1, "a sequence of ints"),
    ("rev", [F23], dict(dimensions=[0]), "dimensions", "0", "a sequence of ints"),
    ("gather", [((4, 3), "float32"), ((2, 1), "int32")], GATHER, "slice_sizes", 1, "a sequence of ints"),
    ("dot_general", [F23, ((3, 4), "float32")], dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]),
     "rhs_contracting_dimensions", 0, "a sequence of ints"),
    ("conv_general_dilated", [IMG, KER], CONV, "rhs_spec", 0, "a sequence of ints"),
    ("reduce_window_sum", [IMG], WINDOW, "window_dimensions", 2, "a sequence of ints"),
    ("select_and_gather_add", [IMG, IMG], dict(WINDOW, select_prim="ge"), "select_prim", 1, "a string"),
    ("sort", [F5], dict(dimension=0), "dimension", 0.5, "an int"),
    ("top_k", [F5], dict(k=2), "k", "2", "an int"),
    ("lu_pivots_to_permutation", [((3,), "int32")], dict(permutation_size=3), "permutation_size", 3.0, "an int"),
    ("constant", [], dict(dtype="float32", value=1.0), "dtype", 1, "a dtype name"),
    ("empty", [], dict(dtype="float32", shape=[2]), "shape", 2, "a sequence of ints"),
]


@pytest.mark.parametrize("op, types, attrs, name, wrong, kind", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_attribute_errors_are_the_same_in_every_family(op, types, attrs, name, wrong, kind):
    _core.infer(op, types, attrs)  # the valid attributes pass
    with pytest.raises(TypeError, match=rf"^\[{op}\] attribute '{name}' must be {kind}$"):
        _core.infer(op, types, {**attrs, name: wrong})
    missing = {k: v for k, v in attrs.items() if k != name}
    with pytest.raises(ValueError, match=rf"^\[{op}\] missing attribute '{name}'$"):
        _core.infer(op, types, missing)


@pytest.mark.parametrize("op, types, attrs, name, wrong, kind", [
    ("sort", [F5], dict(dimension=0), "num_keys", 1.0, "an int"),
    ("cumsum", [F23], dict(axis=1), "reverse", "yes", "a bool"),
    ("slice", [F23], dict(start_indices=[0, 0], limit_indices=[1, 1]), "strides", 1, "a sequence of ints"),
    ("reduce_window_max", [IMG], WINDOW, "padding", 0, "a sequence of ints"),
    ("conv_general_dilated", [IMG, KER], CONV, "feature_group_count", [1], "an int"),
    ("dot_general", [F23, ((3, 4), "float32")], dict(lhs_contracting_dimensions=[1], rhs_contracting_dimensions=[0]),
     "preferred_element_type", 1, "a string"),
    ("gather", [((4, 3), "float32"), ((2, 1), "int32")], GATHER, "mode", 3, "a string"),
    ("qr", [((3, 3), "float32")], {}, "full_matrices", "no", "a bool"),
])
def test_optional_attributes_are_typed_too(op, types, attrs, name, wrong, kind):
    _core.infer(op, types, attrs)  # absent: the default
    with pytest.raises(TypeError, match=rf"^\[{op}\] attribute '{name}' must be {kind}$"):
        _core.infer(op, types, {**attrs, name: wrong})


def test_flags_must_be_0_or_1():
    with pytest.raises(ValueError, match=r"^\[cumsum\] attribute 'reverse' must be a bool \(0 or 1\), got 2$"):
        _core.infer("cumsum", [F23], dict(axis=1, reverse=2))
    with pytest.raises(ValueError, match=r"^\[svd\] attribute 'compute_uv' must be a bool \(0 or 1\), got -1$"):
        _core.infer("svd", [((3, 3), "float32")], dict(compute_uv=-1))
    assert _core.infer("cumsum", [F23], dict(axis=1, reverse=True)) == [F23]


def test_a_dtype_name_that_is_no_dtype_is_a_value_error():
    with pytest.raises(ValueError, match=r"^\[convert_element_type\] attribute 'new_dtype' is not a dtype: 'float7'$"):
        _core.infer("convert_element_type", [F23], dict(new_dtype="float7"))
