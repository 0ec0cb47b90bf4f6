"""jax.nn's block-scaled matrix products (scaled_matmul, scaled_dot_general, get_scaled_dot_general_config).

JAX runs these through cuDNN only (on its CPU they raise NotImplementedError). xjax computes scaled_matmul
by its definition for the dtypes it has: each operand's block of K / K_scales consecutive contracted
entries is multiplied by its scale, and the products are summed in preferred_element_type. The MXFP8
and NVFP4 quantisation of scaled_dot_general needs float8/float4 types, which xjax does not have yet."""
import dataclasses

import ml_dtypes
import numpy as np

from xjax._src import core, dtypes
from xjax._src.lax import elementwise as ew
from xjax._src.lax.base import asarray
from xjax._src.lax.contraction import dot_general
from xjax._src.lax.layout import broadcast_in_dim, reshape

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"]


@dataclasses.dataclass
class BlockScaleConfig:
    """How one operand of scaled_dot_general is quantised: blocks of block_size entries of data_type, each
    with a scale of scale_type (and a global scale for NVFP4)."""
    mode: str
    block_size: int
    data_type: object
    scale_type: object
    global_scale: object
    infer_only: bool


def _expand_scales(scales, k, dtype):
    """[B, M, K / s] scales repeated over their blocks: [B, M, K]."""
    b, m, ks = core.get_aval(scales).shape
    block = k // ks
    wide = broadcast_in_dim(ew.convert_element_type(scales, dtype), (b, m, ks, block), (0, 1, 2))
    return reshape(wide, (b, m, k))


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """out[b, m, n] = sum_k lhs[b, m, k] lhs_scales[b, m, k // s] rhs[b, n, k] rhs_scales[b, n, k // s],
    s = K / K_scales, computed in preferred_element_type."""
    a, b, sa, sb = (asarray(x) for x in (lhs, rhs, lhs_scales, rhs_scales))
    shapes = [core.get_aval(x).shape for x in (a, b, sa, sb)]
    if not all(len(s) == 3 for s in shapes):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    (ba, m, ka), (bb, n, kb), (bsa, msa, ksa), (bsb, nsb, ksb) = shapes
    if ka != kb or ba != bb:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) "
                         f"dimensions, but got shapes {shapes[0]} and {shapes[1]}")
    if ksa != ksb or bsa != bsb:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and contract (K) dimensions, "
                         f"but got shapes {shapes[2]} and {shapes[3]}")
    if msa != m or nsb != n:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of inputs, but got shapes "
                         f"a: {shapes[0]}, b: {shapes[1]}, a_scales: {shapes[2]}, b_scales: {shapes[3]}")
    if ksa == 0 or ka % ksa:
        raise ValueError(f"scaled_matmul: the contract dimension {ka} must be a multiple of the scales' {ksa}")
    out_dtype = dtypes.check_user_dtype(preferred_element_type)
    scaled_a = ew.mul(ew.convert_element_type(a, out_dtype), _expand_scales(sa, ka, out_dtype))
    scaled_b = ew.mul(ew.convert_element_type(b, out_dtype), _expand_scales(sb, kb, out_dtype))
    return dot_general(scaled_a, scaled_b, (((2,), (2,)), ((0,), (0,))), preferred_element_type=out_dtype)


def get_scaled_dot_general_config(mode, global_scale=None):
    """The BlockScaleConfig of a quantisation mode: 'mxfp8' (blocks of 32 float8_e4m3fn entries, float8_e8m0fnu
    scales) or 'nvfp4' (blocks of 16 float4_e2m1fn entries, float8_e4m3fn scales, a global scale)."""
    if mode == "nvfp4":
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=np.dtype(ml_dtypes.float4_e2m1fn),
                                scale_type=np.dtype(ml_dtypes.float8_e4m3fn),
                                global_scale=np.ones((1,), np.float32) if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=np.dtype(ml_dtypes.float8_e4m3fn),
                                scale_type=np.dtype(ml_dtypes.float8_e8m0fnu), global_scale=None, infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32, configs=None,
                       implementation=None):
    """dot_general whose operands are first quantised by `configs` (one per lhs, rhs, gradient); without
    configs, dot_general itself. Quantising needs float8/float4, which xjax lacks: NotImplementedError."""
    del implementation
    if configs is None:
        return dot_general(lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type)
    raise NotImplementedError("jax.nn.scaled_dot_general with configs quantises to float8/float4 (MXFP8, NVFP4), "
                              "dtypes xjax does not support yet; call it without configs, or scaled_matmul")
