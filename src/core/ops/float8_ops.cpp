#include "core/ops/float8_ops.h"

#include <string>

#include "core/errors.h"

namespace xjax {

bool accepts_float8(OpId op) {
  switch (op) {
    // values, data movement and control: the kernels move the bytes as uint8 (dtype.h: moved_as)
    case OpId::parameter_: case OpId::constant_: case OpId::empty_: case OpId::reshape_:
    case OpId::broadcast_in_dim_: case OpId::transpose_: case OpId::slice_: case OpId::dynamic_slice_:
    case OpId::dynamic_update_slice_: case OpId::concatenate_: case OpId::pad_: case OpId::rev_:
    case OpId::gather_: case OpId::scatter_: case OpId::select_n_: case OpId::copy_:
    case OpId::optimization_barrier_: case OpId::cond_: case OpId::while_: case OpId::host_callback_:
    case OpId::bitcast_convert_type_:
    // the conversions (values: ops/scalar_float8.h)
    case OpId::convert_element_type_:
      return true;
    default:
      return false;
  }
}

void check_float8_widens(OpId op, DType dt) {
  if (op == OpId::nextafter_)
    throw NotImplementedError(std::string("[") + op_name(op) + "] does not support " + dtype_name(dt) +
                              " operands yet (its float32 step is not a float8 step)");
}

}  // namespace xjax
