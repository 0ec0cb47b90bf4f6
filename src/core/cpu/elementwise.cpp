// CPU kernels of the elementwise ops and iota: the loop lookup, and the eager driver that splits
// arrays over the thread pool and calls one loop per chunk.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/cpu/bytes16.h"
#include "core/cpu/elementwise_impl.h"
#include "core/cpu/fused_loops.h"
#include "core/cpu/kernels.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

bool is_comparison(OpId op) {
  return op == OpId::eq_ || op == OpId::ne_ || op == OpId::lt_ || op == OpId::le_ || op == OpId::gt_ ||
         op == OpId::ge_;
}

// Chunks handed to threads are whole blocks, so that they start on cache-line boundaries.
constexpr int64_t kBlock = 1024;
constexpr int64_t kGrainBlocks = 32;  // ~32K elements per chunk at least
// 0-d operands of clamp/select_n are expanded to tiles of this many elements.
constexpr int64_t kTile = 1024;

const char* at(const Tensor& t, int64_t i) { return static_cast<const char*>(t.data) + i * int64_t(itemsize(t.dtype)); }

// select_n with more cases than its loops cover: a plain loop per element size.
template <class E>
void select_any(const std::vector<Tensor>& in, const Tensor& out) {
  int64_t n = out.size();
  int num_cases = int(in.size()) - 1;
  bool scalar_which = in[0].size() == 1 && n > 1;
  parallel_for(n, kBlock * kGrainBlocks, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int64_t w = scalar_which ? 0 : i;
      int64_t k = in[0].dtype == DType::Bool ? int64_t(in[0].as<bool>()[w]) : int64_t(in[0].as<int32_t>()[w]);
      k = k < 0 ? 0 : (k >= num_cases ? num_cases - 1 : k);
      out.as<E>()[i] = in[1 + k].as<E>()[i];
    }
  });
}

void run_fallback(OpId op, const std::vector<Tensor>& in, const Tensor& out, const Attrs& attrs) {
  if (op == OpId::integer_pow_) {
    int64_t y = attrs.get_int("y");
    parallel_for(out.size(), kBlock * kGrainBlocks, [&](int64_t b, int64_t e) {
      ew::integer_pow_any(out.dtype, at(in[0], b), const_cast<char*>(at(out, b)), e - b, y);
    });
    return;
  }
  if (op == OpId::select_n_) {
    switch (itemsize(out.dtype)) {
      case 1: return select_any<uint8_t>(in, out);
      case 2: return select_any<uint16_t>(in, out);
      case 4: return select_any<uint32_t>(in, out);
      case 8: return select_any<uint64_t>(in, out);
      default: return select_any<Bytes16>(in, out);
    }
  }
  throw std::logic_error(std::string("[") + op_name(op) + "] no CPU loop for " + dtype_name(in[0].dtype));
}

template <OpId kOp>
void elementwise_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  run_elementwise(kOp, in, out[0], attrs);
}

// iota: out[..., j, ...] = j along `dimension`, filled as rows of `inner` equal values.
void iota_kernel(const std::vector<Tensor>&, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& o = out[0];
  if (o.size() == 0) return;
  int64_t dim = attrs.get_int("dimension");
  int64_t len = o.shape[dim];
  int64_t inner = 1;
  for (size_t d = size_t(dim) + 1; d < o.shape.size(); ++d) inner *= o.shape[d];
  int64_t rows = o.size() / inner;  // (outer index, j) pairs
  dispatch_dtype(o.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = o.as<T>();
    parallel_for(rows, std::max<int64_t>(1, kBlock * kGrainBlocks / inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        T v = T(typename ComputeOf<T>::type(r % len));
        std::fill(p + r * inner, p + (r + 1) * inner, v);
      }
    });
  });
}

}  // namespace

ElementwiseLoop elementwise_loop(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs) {
  if (in.empty()) return nullptr;
  bool float8 = is_float8(out);
  for (DType d : in) float8 = float8 || is_float8(d);
  if (float8 && op == OpId::convert_element_type_) return in.size() == 1 ? ew::float8_convert_loop(in[0], out) : nullptr;
  bool complex = is_complex(out);
  for (DType d : in) complex = complex || is_complex(d);
  if (complex && op != OpId::select_n_ && op != OpId::copy_) return ew::complex_loop(op, in, out, attrs);
  if (op == OpId::convert_element_type_) return in.size() == 1 ? ew::convert_loop(in[0], out) : nullptr;
  if (op == OpId::bitcast_convert_type_)  // moves the bytes: the same-type copy loop of that width
    return in.size() == 1 && itemsize(in[0]) == itemsize(out) ? ew::convert_loop(in[0], in[0]) : nullptr;
  if (op == OpId::threefry2x32_) return ew::threefry_loop(in, out, 0);
  if (op == OpId::select_n_) {
    for (size_t k = 2; k < in.size(); ++k)
      if (in[k] != in[1]) return nullptr;
    return in.size() >= 2 && out == in[1] ? ew::select_loop(in[0], in[1], int(in.size()) - 1) : nullptr;
  }
  for (DType d : in)
    if (d != in[0]) return nullptr;
  bool to_bool = is_comparison(op) || op == OpId::is_finite_;
  if (out != (to_bool ? DType::Bool : in[0])) return nullptr;
  int arity = op_info(op).arity;
  if (op_info(op).kind != OpKind::Elementwise || int(in.size()) != arity) return nullptr;
  DType dt = in[0];
  switch (op) {
    case OpId::copy_: return ew::convert_loop(dt, dt);
    case OpId::clamp_: return ew::clamp_loop(dt);
    default: break;
  }
  if (is_comparison(op)) return ew::compare_loop(op, dt);
  if (ElementwiseLoop f = ew::xla_log_loop(op, dt)) return f;
  if (ElementwiseLoop f = ew::math_loop(op, dt, attrs)) return f;
  if (ElementwiseLoop f = ew::special_loop(op, dt)) return f;
  if (ElementwiseLoop f = ew::arith_loop(op, dt, attrs)) return f;
  return ew::bits_loop(op, dt);
}

void run_elementwise(OpId op, const std::vector<Tensor>& in, const Tensor& out, const Attrs& attrs) {
  int64_t n = out.size();
  if (n == 0) return;
  thread_local std::vector<DType> dtypes;  // kept per thread: no allocation per call
  dtypes.clear();
  for (const Tensor& t : in) dtypes.push_back(t.dtype);
  ElementwiseLoop loop = elementwise_loop(op, dtypes, out.dtype, attrs);
  if (!loop) return run_fallback(op, in, out, attrs);

  // Operands with one element feeding a larger result (a Python scalar's constant, 0-d bounds of
  // clamp, 0-d which of select_n); their flags on the stack for the usual few operands (a heap
  // vector here cost every eager op 0.1 us).
  constexpr size_t kStack = 16;
  uint8_t flags_stack[kStack] = {};
  std::vector<uint8_t> flags_heap(in.size() > kStack ? in.size() : 0, 0);
  uint8_t* is_scalar = in.size() > kStack ? flags_heap.data() : flags_stack;
  unsigned scalar_mask = 0;
  bool any_scalar = false;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].size() == 1 && n > 1) {
      is_scalar[k] = 1;
      any_scalar = true;
      if (k < 32) scalar_mask |= 1u << k;
    }
  // The fused engine's loops that read a one-value operand in place (x * 2.0 streams one array),
  // where there is one for this op: the same scalar definitions, so the same bits.
  ElementwiseLoop in_place = any_scalar && in.size() <= 32 ? fused_loop(op, dtypes, out.dtype, scalar_mask) : nullptr;
  size_t out_size = itemsize(out.dtype);
  int64_t blocks = (n + kBlock - 1) / kBlock;

  parallel_for(blocks, kGrainBlocks, [&](int64_t b, int64_t e) {
    int64_t begin = b * kBlock, end = std::min(n, e * kBlock);
    const void* ptrs_stack[kStack];
    std::vector<const void*> ptrs_heap(in.size() > kStack ? in.size() : 0);
    const void** ptrs = in.size() > kStack ? ptrs_heap.data() : ptrs_stack;
    char* dst = static_cast<char*>(out.data) + begin * int64_t(out_size);
    if (!any_scalar || in_place) {
      for (size_t k = 0; k < in.size(); ++k) ptrs[k] = is_scalar[k] ? in[k].data : at(in[k], begin);
      (in_place ? in_place : loop)(ptrs, dst, end - begin);
      return;
    }
    // Expand each 0-d operand into a tile once (no longer than the range: a 4-element add must not
    // fill a whole tile), by doubling copies, then run the loop tile by tile.
    const int64_t fill = std::min(kTile, end - begin);
    std::vector<std::vector<char>> expanded;
    for (size_t k = 0; k < in.size(); ++k) {
      if (!is_scalar[k]) continue;
      const size_t size = itemsize(in[k].dtype);
      std::vector<char>& tile = expanded.emplace_back(size_t(fill) * size);
      std::memcpy(tile.data(), in[k].data, size);
      for (int64_t done = 1; done < fill; done *= 2)
        std::memcpy(tile.data() + done * size, tile.data(), size_t(std::min(done, fill - done)) * size);
      ptrs[k] = tile.data();
    }
    for (int64_t t0 = begin; t0 < end; t0 += kTile) {
      int64_t len = std::min(kTile, end - t0);
      for (size_t k = 0; k < in.size(); ++k)
        if (!is_scalar[k]) ptrs[k] = at(in[k], t0);
      loop(ptrs, static_cast<char*>(out.data) + t0 * int64_t(out_size), len);
    }
  });
}

void register_elementwise_cpu(CpuKernelTable& t) {
#define XJAX_EW_REGISTER(name, kind, arity) \
  if (OpKind::kind == OpKind::Elementwise) t.set_cpu(OpId::name##_, &elementwise_kernel<OpId::name##_>);
  XJAX_OP_LIST(XJAX_EW_REGISTER)
#undef XJAX_EW_REGISTER
  t.set_cpu(OpId::iota_, &iota_kernel);
}

}  // namespace xjax
