// CPU kernels of the reduction ops.
#include "core/ops/ops.h"

namespace xjax {

void register_reduction_cpu(OpTable&) {}

}  // namespace xjax
