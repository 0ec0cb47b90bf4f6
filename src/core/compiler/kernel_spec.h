// The backend-neutral description of one fused group: what fusion decided, before any backend
// chose how to run it. The CPU lowers it to a FusedProgram (cpu/fused_lower.h); the CUDA
// generator writes a kernel from it. Nothing in it is CPU-specific: steps are ops with their
// attributes, loads are index maps, and slots are typed values that live per element.
//
// The kernel computes, for every flat index i of its index space [0, n): each load's value at i,
// then the steps in order, then writes each stored slot to outputs[store.output][i] (n elements).
// With reductions, the index space is also (k0, r, k1) row-major and r is reduced: element (a, b)
// of a reduction's output (k0 x k1 elements) folds the slot's values at (a, *, b). Stores still
// write all n elements then (a value used both whole and by a reduction).
#pragma once
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/ops/ops.h"
#include "core/ops/red_op.h"

namespace xjax {

class Graph;
struct Fusion;

// How a slot gets its value at flat index i.
struct KernelLoad {
  enum class Kind : uint8_t {
    Contiguous,  // inputs[input][offset + i]
    Fill,        // one value for every i: inputs[input][offset], or `value` when input < 0
    Strided,     // inputs[input][offset + sum_d idx_d * strides[d]], idx = the multi-index of i in `shape`
    Iota,        // no input: (i / iota_inner) % iota_len in the slot's dtype (an iota's coordinate)
  };
  Kind kind = Kind::Contiguous;
  int input = -1;      // index into FusedKernelSpec::inputs, or -1
  int64_t offset = 0;  // in elements of the input
  std::string value;   // Fill with input < 0: the bytes of one element of the slot's dtype
  Shape shape;         // Strided: numel(shape) == n, size-1 dims dropped, adjacent dims merged
  std::vector<int64_t> strides;  // Strided: elements, one per dim of shape (0: broadcast)
  int64_t iota_inner = 1, iota_len = 1;  // Iota
  int slot = -1;
};

// slots[out] = op(slots[args]...) with the op's attributes (integer_pow's y, round's method,
// convert_element_type's new_dtype, ...), as the op's shape rule validated them.
struct KernelStep {
  OpId op = OpId::kCount;
  Attrs attrs;
  std::vector<int> args;         // slots, in the op's operand order
  std::vector<DType> arg_dtypes;  // the args' slot dtypes
  int out = -1;
  DType out_dtype = DType::Float32;
};

struct KernelStore {
  int slot;
  int output;  // index into FusedKernelSpec::outputs
};

// outputs[output] = the `op` reduction of the slot's values over r (in the slot's dtype).
struct KernelReduction {
  RedOp op;
  DType dtype;
  int slot;
  int output;
};

struct FusedKernelSpec {
  int64_t n = 0;                  // elements of the index space
  int64_t k0 = 1, r = 1, k1 = 1;  // with reductions: n == k0 * r * k1
  std::vector<int> inputs;         // plan value ids read, in order (operands of the kernel)
  std::vector<TypeInfo> input_types;
  std::vector<int> outputs;        // plan value ids written: the stores' values, then the reductions'
  std::vector<TypeInfo> output_types;
  std::vector<DType> slot_dtype;   // per slot; a slot is written by exactly one load or step
  std::vector<KernelLoad> loads;   // no two alike
  std::vector<KernelStep> steps;   // in dependency order
  std::vector<KernelStore> stores;
  std::vector<KernelReduction> reductions;

  int add_slot(DType dt) {
    slot_dtype.push_back(dt);
    return int(slot_dtype.size()) - 1;
  }
  // "n=8; $0:float32=load in0; $1:float32=fill 0x3f800000; $2:float32=integer_pow[y=3]($0);
  // out0=$2" style summary, slots in order.
  std::string describe() const;
};

// The spec of fused group `group` of `fusion`: loads deduplicated, strided loads with their
// mergeable dims merged, splat constants as fills, iotas read flat generated in the kernel.
// value_base: per node, the id of its first result (Plan::value_base).
FusedKernelSpec build_kernel_spec(const Graph& g, const Fusion& fusion, int group, const std::vector<int>& value_base);

}  // namespace xjax
