// Op identities, the catalogue lookup, and the per-op shape/dtype rules (backend-neutral).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/dtype.h"
#include "core/ops/op_list.h"
#include "core/shape.h"

namespace xjax {

class Buffer;

enum class OpId : int {
#define XJAX_OP_ENUM(name, kind, arity) name##_,
  XJAX_OP_LIST(XJAX_OP_ENUM)
#undef XJAX_OP_ENUM
  kCount
};
constexpr int kNumOps = int(OpId::kCount);

enum class OpKind {
  Elementwise, Source, Reduction, Cumulative, Layout, Index, Contraction, Sort,
  Window,     // reductions over sliding windows (and their derivatives)
  Linalg,     // factorizations and solves of matrices in the last two dims (LAPACK)
  Fft,        // discrete Fourier transforms over the trailing dims
  Broadcast,  // re-indexes its operand, element order kept (fusible as a load)
  Control,    // runs subgraphs (cond, while)
  Effect,     // side effects (host callbacks): kept by DCE, run in program order
  Barrier,    // results are its operands; no pass looks through it (optimization_barrier)
};

struct TypeInfo {
  Shape shape;
  DType dtype;
  bool operator==(const TypeInfo& o) const { return shape == o.shape && dtype == o.dtype; }
};

// A kernel's view of one operand or result: contiguous row-major data.
struct Tensor {
  void* data;
  Shape shape;
  DType dtype;
  // The buffer holding `data` where the executor knows it (null elsewhere): a kernel that hands
  // `data` to something outliving the call (an MPI operation abandoned on an error) keeps it alive.
  const std::shared_ptr<Buffer>* owner = nullptr;
  int64_t size() const { return numel(shape); }
  template <typename T> T* as() const { return static_cast<T*>(data); }
};

// Computes result types; throws TypeError/ValueError naming the op, shapes and dtypes.
using InferFn = std::vector<TypeInfo> (*)(const std::vector<TypeInfo>& in, const Attrs& attrs);

struct OpInfo {
  const char* name;
  OpKind kind;
  int arity;
  InferFn infer = nullptr;
};

const OpInfo& op_info(OpId op);
OpId op_from_name(const std::string& name);  // throws ValueError for unknown names
inline const char* op_name(OpId op) { return op_info(op).name; }

// Infers result types after checking arity; the one entry point used by the graph.
std::vector<TypeInfo> infer_types(OpId op, const std::vector<TypeInfo>& in, const Attrs& attrs);

// Registration of the shape rules, one function per op family (each in its own file). Kernels are
// each backend's own (the CPU's: cpu/kernels.h).
struct OpTable {
  void set_infer(OpId op, InferFn f);
};
void register_elementwise_infer(OpTable&);
void register_reduction_infer(OpTable&);
void register_layout_infer(OpTable&);
void register_index_infer(OpTable&);
void register_contraction_infer(OpTable&);
void register_convolution_infer(OpTable&);
void register_window_infer(OpTable&);
void register_sort_infer(OpTable&);
void register_linalg_infer(OpTable&);
void register_linalg_forms_infer(OpTable&);
void register_fft_infer(OpTable&);
void register_compiler_infer(OpTable&);  // constant, control flow, callbacks, barrier (src/core/compiler)
void register_collective_ops(OpTable&);  // across processes: all_reduce (src/core/distributed)

// Helpers shared by infer functions: "[op] message" errors and axis checks.
[[noreturn]] void fail_type(OpId op, const std::string& msg);
[[noreturn]] void fail_value(OpId op, const std::string& msg);
std::string types_str(const std::vector<TypeInfo>& in);
// The result dtype of a contraction (dot_general, conv_general_dilated) of `in` operands under
// the optional 'preferred_element_type' attribute, by JAX's rules; TypeErrors name op and ctx.
DType preferred_result_dtype(OpId op, DType in, const Attrs& attrs, const std::string& ctx);

}  // namespace xjax
