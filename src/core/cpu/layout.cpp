// CPU kernels of the layout ops.
#include "core/ops/ops.h"

namespace xjax {

void register_layout_cpu(OpTable&) {}

}  // namespace xjax
