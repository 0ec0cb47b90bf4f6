// Shape and dtype rules of the contraction ops.
#include "core/ops/ops.h"

namespace xjax {

void register_contraction_infer(OpTable&) {}

}  // namespace xjax
