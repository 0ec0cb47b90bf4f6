// CPU kernels of the elementwise ops.
#include "core/ops/ops.h"

namespace xjax {

void register_elementwise_cpu(OpTable&) {}

}  // namespace xjax
