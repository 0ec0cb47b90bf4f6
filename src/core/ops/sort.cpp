// Shape and dtype rules of the sort ops.
#include "core/ops/ops.h"

namespace xjax {

void register_sort_infer(OpTable&) {}

}  // namespace xjax
