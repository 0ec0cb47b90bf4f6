// Shape and dtype rules of the layout ops.
#include "core/ops/ops.h"

namespace xjax {

void register_layout_infer(OpTable&) {}

}  // namespace xjax
