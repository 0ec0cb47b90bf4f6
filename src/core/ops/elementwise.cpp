// Shape and dtype rules of the elementwise ops.
#include "core/ops/ops.h"

namespace xjax {

void register_elementwise_infer(OpTable&) {}

}  // namespace xjax
