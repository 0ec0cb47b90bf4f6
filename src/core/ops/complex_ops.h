// Which ops take complex operands or give complex results. Complex numbers reach an op's kernels
// only through here: infer_types refuses every other op with a complex operand or result
// (NotImplementedError), so a kernel written for real dtypes never sees one.
#pragma once
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

bool accepts_complex(OpId op);

// Throws NotImplementedError naming the op when a complex dtype is among `in` or `out` and the op
// does not accept complex numbers.
void check_complex_support(OpId op, const std::vector<TypeInfo>& in, const std::vector<TypeInfo>& out);

}  // namespace xjax
