// CPU kernels of the sort ops.
#include "core/ops/ops.h"

namespace xjax {

void register_sort_cpu(OpTable&) {}

}  // namespace xjax
