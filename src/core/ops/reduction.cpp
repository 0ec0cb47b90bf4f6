// Shape and dtype rules of the reduction ops.
#include "core/ops/ops.h"

namespace xjax {

void register_reduction_infer(OpTable&) {}

}  // namespace xjax
