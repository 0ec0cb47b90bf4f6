// Internal to the fused engine: tile evaluation (loads, steps, stores) shared by its drivers.
#pragma once
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/cpu/bytes16.h"
#include "core/cpu/fused.h"
#include "core/cpu/fused_loops.h"

namespace xjax {

namespace fused {

// Elements one task should cover so that scheduling costs stay small; tasks to aim for when a
// reduction has few outputs (a constant, so results do not depend on the thread count).
constexpr int64_t kTaskElements = 1 << 15;
constexpr int64_t kTargetTasks = 64;
constexpr int kMaxArgs = 16;

// Per-thread tile buffers, grown on demand and kept for the next program. Page aligned, like the
// tiles of large arrays: a store to one buffer then never falsely aliases (modulo 4 KB) the loads
// just ahead in another, which costs a stall per vector.
inline char* thread_scratch(size_t bytes) {
  constexpr size_t kAlign = 4096;
  thread_local std::unique_ptr<char[]> mem;
  thread_local size_t size = 0;
  if (size < bytes + kAlign) {
    size = std::max(bytes + kAlign, size * 2);
    mem.reset(new char[size]);
  }
  uintptr_t p = reinterpret_cast<uintptr_t>(mem.get());
  return reinterpret_cast<char*>((p + kAlign - 1) & ~uintptr_t(kAlign - 1));
}

template <typename E>
void fill_run(char* dst, const char* src, int64_t n) {
  E v;
  std::memcpy(&v, src, sizeof(E));
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}

inline void fill(char* dst, const char* elem, size_t es, int64_t n) {
  switch (es) {
    case 1: return fill_run<uint8_t>(dst, elem, n);
    case 2: return fill_run<uint16_t>(dst, elem, n);
    case 4: return fill_run<uint32_t>(dst, elem, n);
    case 8: return fill_run<uint64_t>(dst, elem, n);
    default: return fill_run<Bytes16>(dst, elem, n);
  }
}

template <typename E>
void strided_run(char* dst, const char* src, int64_t stride, int64_t n) {
  E* d = reinterpret_cast<E*>(dst);
  const E* s = reinterpret_cast<const E*>(src);
  for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
}

// memcpy for the short runs of windows and slices (a few elements): two overlapping word copies
// instead of a call.
inline void copy_run(char* dst, const char* src, size_t bytes) {
  if (bytes > 16) return (void)std::memcpy(dst, src, bytes);
  if (bytes >= 8) {
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + bytes - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + bytes - 8, &b, 8);
  } else if (bytes >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + bytes - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + bytes - 4, &b, 4);
  } else {
    for (size_t i = 0; i < bytes; ++i) dst[i] = src[i];
  }
}

// dst[0:len] = the load's values at flat indices [start, start + len): runs along the last dim
// are filled (stride 0), copied (stride 1) or gathered. `idx` holds one counter per dim.
template <typename Index>
__attribute__((always_inline)) inline void gather_runs(const FusedLoad& L, const char* base, char* dst, size_t es, int64_t start, int64_t len,
                        Index& idx) {
  const size_t rank = L.shape.size();
  int64_t off = 0, rest = start;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = rest % L.shape[d];
    rest /= L.shape[d];
    off += idx[d] * L.strides[d];
  }
  const int64_t inner = L.shape[rank - 1], st = L.strides[rank - 1];
  while (len > 0) {
    int64_t run = std::min(inner - idx[rank - 1], len);
    const char* src = base + off * int64_t(es);
    if (st == 0) fill(dst, src, es, run);
    else if (st == 1) copy_run(dst, src, size_t(run) * es);
    else if (es == 1) strided_run<uint8_t>(dst, src, st, run);
    else if (es == 2) strided_run<uint16_t>(dst, src, st, run);
    else if (es == 4) strided_run<uint32_t>(dst, src, st, run);
    else if (es == 8) strided_run<uint64_t>(dst, src, st, run);
    else strided_run<Bytes16>(dst, src, st, run);
    dst += size_t(run) * es;
    len -= run;
    off += run * st;
    idx[rank - 1] += run;
    for (size_t d = rank - 1; d > 0 && idx[d] == L.shape[d]; --d) {  // carry
      off -= idx[d] * L.strides[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += L.strides[d - 1];
    }
  }
}

// dst[0:len] = the coordinates along an iota's dimension of flat indices [start, start + len), as
// the slot's dtype: runs of `inner` equal values counting up modulo `count`.
template <typename T>
void iota_run(T* dst, int64_t start, int64_t len, int64_t inner, int64_t count) {
  using C = typename ComputeOf<T>::type;
  if (inner == 1 && start + len <= count) {  // the common case: a plain count
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // in T's own width (wrapping, as the conversion does): no 64-bit lanes to narrow
      using U = std::make_unsigned_t<T>;
      count_up(reinterpret_cast<U*>(dst), U(uint64_t(start)), len);
    } else {
      for (int64_t i = 0; i < len; ++i) dst[i] = T(C(start + i));
    }
    return;
  }
  int64_t q = start / inner, r = start % inner, v = q % count;
  for (int64_t i = 0; i < len; ++i) {
    dst[i] = T(C(v));
    if (++r == inner) {
      r = 0;
      if (++v == count) v = 0;
    }
  }
}

inline void iota(const FusedLoad& L, DType dt, char* dst, int64_t start, int64_t len) {
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) iota_run(reinterpret_cast<T*>(dst), start, len, L.iota_inner, L.iota_len);
  });
}

// Rows of `inner` contiguous elements `row_stride` apart (a window or a slice of a matrix): no
// per-run index arithmetic, which dominates when rows are a few elements long.
inline void gather_rows(const FusedLoad& L, const char* base, char* dst, size_t es, int64_t start, int64_t len) {
  const int64_t inner = L.shape[1], row_step = L.strides[0] * int64_t(es);
  const size_t row_bytes = size_t(inner) * es;
  int64_t row = start / inner, col = start % inner;
  const char* src = base + (row * L.strides[0] + col) * int64_t(es);
  int64_t run = std::min(inner - col, len);
  copy_run(dst, src, size_t(run) * es);
  dst += size_t(run) * es;
  len -= run;
  src += row_step - col * int64_t(es);
  for (; len >= inner; len -= inner, dst += row_bytes, src += row_step) copy_run(dst, src, row_bytes);
  if (len > 0) copy_run(dst, src, size_t(len) * es);
}

// Any rank. The counters of up to 16 dims live in a local array, which the compiler keeps apart
// from the bytes written to dst (a pointer that may reach the heap would be reloaded per run).
inline void gather(const FusedLoad& L, const char* base, char* dst, size_t es, int64_t start, int64_t len) {
  if (L.shape.size() == 2 && L.strides[1] == 1) return gather_rows(L, base, dst, es, start, len);
  if (L.shape.size() <= 16) {
    int64_t idx[16];
    gather_runs(L, base, dst, es, start, len, idx);
  } else {
    std::vector<int64_t> idx(L.shape.size());
    gather_runs(L, base, dst, es, start, len, idx);
  }
}

}  // namespace fused

// The state of one thread working through tiles: slot pointers and tile buffers.
struct FusedProgram::Tile {
  const FusedProgram& p;
  const void* const* in;
  void* const* out;
  void* ptr[64];
  std::vector<void*> big;  // when a program has more than 64 slots: the thread's spare, reused
  void** slot;

  static std::vector<void*>& spare() {
    thread_local std::vector<void*> s;
    return s;
  }
  Tile(const FusedProgram& prog, const void* const* inputs, void* const* outputs)
      : p(prog), in(inputs), out(outputs) {
    size_t n = p.slot_dtype.size();
    if (n > 64) {
      big.swap(spare());  // (a loop body's kernel over many leaves runs every iteration: no allocation)
      big.resize(n);
    }
    slot = n > 64 ? big.data() : ptr;
    size_t buf_bytes = size_t(p.tile) * size_t(p.buffer_elem);
    char* scratch = fused::thread_scratch(buf_bytes * size_t(p.num_buffers));
    for (size_t s = 0; s < n; ++s)
      slot[s] = p.slot_buffer[s] >= 0 ? scratch + size_t(p.slot_buffer[s]) * buf_bytes : nullptr;
    for (int l : p.fill_loads) {
      const FusedLoad& L = p.loads[l];
      const size_t es = p.slot_bytes[L.slot];
      const char* elem = L.input >= 0 ? static_cast<const char*>(in[L.input]) + L.offset * int64_t(es) : L.value.data();
      fused::fill(static_cast<char*>(slot[L.slot]), elem, es, p.tile);
    }
  }

  ~Tile() {
    if (!big.empty()) big.swap(spare());
  }
  Tile(const Tile&) = delete;
  Tile& operator=(const Tile&) = delete;

  // Evaluates the program over flat indices [start, start + len), len <= tile.
  void compute(int64_t start, int64_t len) {
    for (int l : p.tile_loads) {  // (fills were filled once)
      const FusedLoad& L = p.loads[l];
      if (L.kind == FusedLoad::Kind::Iota) {
        fused::iota(L, p.slot_dtype[L.slot], static_cast<char*>(slot[L.slot]), start, len);
        continue;
      }
      const size_t es = p.slot_bytes[L.slot];
      const char* base = static_cast<const char*>(in[L.input]) + L.offset * int64_t(es);
      if (L.kind == FusedLoad::Kind::Contiguous)
        slot[L.slot] = const_cast<char*>(base) + start * int64_t(es);
      else if (L.kind == FusedLoad::Kind::Strided)
        fused::gather(L, base, static_cast<char*>(slot[L.slot]), es, start, len);
    }
    for (auto [s, o] : p.direct_slots) slot[s] = static_cast<char*>(out[o]) + start * int64_t(p.slot_bytes[s]);
    const void* args[fused::kMaxArgs];
    for (const FusedStep& st : p.steps) {
      for (size_t k = 0; k < st.args.size(); ++k) args[k] = slot[st.args[k]];
      st.loop(args, slot[st.out], len);
    }
    for (int c : p.copy_stores) {
      const FusedStore& s = p.stores[c];
      const size_t es = p.slot_bytes[s.slot];
      std::memcpy(static_cast<char*>(out[s.output]) + start * int64_t(es), slot[s.slot], size_t(len) * es);
    }
  }
};

}  // namespace xjax
