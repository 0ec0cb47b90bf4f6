// Shape and dtype rules of the index ops.
#include "core/ops/ops.h"

namespace xjax {

void register_index_infer(OpTable&) {}

}  // namespace xjax
