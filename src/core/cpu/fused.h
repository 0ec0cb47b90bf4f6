// The fused kernel engine: a small program of elementwise steps over one index space of n
// elements, optionally folded into reductions, run by a tiled vector interpreter. Each tile
// (a few thousand elements, so that it stays in L1/L2) loads or broadcasts the inputs into tile
// buffers, runs every step's precompiled elementwise loop over the tile, then writes the outputs
// or folds the reduced values into accumulators. Tiles are spread over the thread pool;
// intermediate values never leave the tile buffers.
#pragma once
#include <string>
#include <vector>

#include "core/cpu/elementwise_loops.h"
#include "core/cpu/reduction_loops.h"

namespace xjax {

// How a slot gets its values for a tile of flat indices [start, start + len).
struct FusedLoad {
  enum class Kind : uint8_t {
    Contiguous,  // input element i is index i: read in place
    Fill,        // one value everywhere: an input's first element, or `value` (bytes) when input < 0
    Strided,     // index i -> input offset sum(idx_d * strides[d]) over the multi-index of i in `shape`
    Iota,        // no input: value (i / iota_inner) % iota_len, the coordinate of i along an iota's dim
  };
  Kind kind = Kind::Contiguous;
  int input = -1;
  int64_t offset = 0;  // elements of the input before the first one read (a slice's start)
  std::string value;
  Shape shape;
  std::vector<int64_t> strides;
  int64_t iota_inner = 1, iota_len = 1;
  int slot = -1;
};

// out = loop(args...) over the tile; args and out are slots.
struct FusedStep {
  ElementwiseLoop loop = nullptr;
  std::vector<int> args;
  int out = -1;
  std::string name;  // for descriptions
  OpId op = OpId::kCount;
};

struct FusedStore {
  int slot;
  int output;
};

// Folds slot values into output `output`, of the slot's dtype.
struct FusedReduce {
  RedOp op;
  DType dtype;
  int slot;
  int output;
};

class FusedProgram {
 public:
  int64_t n = 0;  // elements of the index space
  int num_inputs = 0, num_outputs = 0;
  std::vector<DType> slot_dtype;
  std::vector<FusedLoad> loads;
  std::vector<FusedStep> steps;
  std::vector<FusedStore> stores;
  std::vector<FusedReduce> reductions;
  // With reductions, the index space is (k0, r, k1) row-major and r is reduced:
  // output element (i, j) of every reduction folds the r values at (i, *, j).
  int64_t k0 = 1, r = 1, k1 = 1;

  int add_slot(DType dt) {
    slot_dtype.push_back(dt);
    return int(slot_dtype.size()) - 1;
  }
  // Plans where each slot lives during a tile; call once after filling the program.
  void finalize();
  // Whether output o may be written over input i (same buffer) without changing results.
  bool may_overwrite(int output, int input) const;
  // Runs the program: inputs[i] and outputs[o] point at contiguous arrays.
  void run(const void* const* inputs, void* const* outputs) const;
  // "exp(%3), mul(%4, %1) -> sum" style summary.
  std::string describe() const;

  // Filled by finalize(): elements per parallel task (fewer for programs with more work per
  // element, such as many sibling groups run as one), the tile length and each slot's home (-1:
  // read or written in place).
  int64_t task_elements = 1 << 15;
  int64_t tile = 1024;
  int64_t buffer_elem = 8;  // bytes per element of a tile buffer: 16 when a slot is complex128
  std::vector<int> slot_buffer;
  int num_buffers = 0;
  std::vector<int> direct_output;  // per slot: the output it is written to in place, or -1
  std::vector<int> copy_stores;    // indices into stores that need a copy at the end of a tile
  // What a tile looks up per load and slot, found once (a loop body's kernels over many scalar
  // leaves run every iteration): element sizes, the loads filled once per thread and those read
  // per tile, the slots written to outputs directly.
  std::vector<uint8_t> slot_bytes;
  std::vector<int> fill_loads, tile_loads;
  std::vector<std::pair<int, int>> direct_slots;  // (slot, output)

 private:
  struct Tile;
  void run_elementwise(const void* const* inputs, void* const* outputs) const;
  void run_inner(const void* const* inputs, void* const* outputs) const;
  void run_outer(const void* const* inputs, void* const* outputs) const;
  void run_empty(void* const* outputs) const;
};

}  // namespace xjax
