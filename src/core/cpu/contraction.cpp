// CPU kernels of the contraction ops.
#include "core/ops/ops.h"

namespace xjax {

void register_contraction_cpu(OpTable&) {}

}  // namespace xjax
