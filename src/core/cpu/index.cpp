// CPU kernels of the index ops.
#include "core/ops/ops.h"

namespace xjax {

void register_index_cpu(OpTable&) {}

}  // namespace xjax
