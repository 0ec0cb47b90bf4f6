// The tiled interpreter of fused programs: slot planning, tile evaluation, and the three drivers
// (elementwise only; reductions over an inner run; reductions over outer rows).
#include "core/cpu/fused_tile.h"
#include "core/thread_pool.h"

namespace xjax {

using namespace fused;

void FusedProgram::finalize() {
  const int num_slots = int(slot_dtype.size());
  const int end = int(steps.size());  // stores and reductions read at the end of a tile
  std::vector<int> last_use(num_slots, -1), def(num_slots, -1);
  for (int s = 0; s < end; ++s) {
    for (int a : steps[s].args) last_use[a] = std::max(last_use[a], s);
    def[steps[s].out] = s;
  }
  for (const FusedStore& s : stores) last_use[s.slot] = end;
  for (const FusedReduce& r : reductions) last_use[r.slot] = end;

  // Step results stored to an output are written there directly (the first store of a slot).
  direct_output.assign(num_slots, -1);
  copy_stores.clear();
  for (size_t i = 0; i < stores.size(); ++i) {
    int s = stores[i].slot;
    if (def[s] >= 0 && direct_output[s] < 0) direct_output[s] = stores[i].output;
    else copy_stores.push_back(int(i));
  }

  // Tile buffers: fills and gathers get their own; step results share buffers whose values are
  // dead, in place over a dying operand of the same element size when there is one.
  slot_buffer.assign(num_slots, -1);
  std::vector<int> free_list;
  std::vector<bool> persistent;
  auto take = [&]() {
    if (!free_list.empty()) {
      int b = free_list.back();
      free_list.pop_back();
      return b;
    }
    persistent.push_back(false);
    return int(persistent.size()) - 1;
  };
  for (const FusedLoad& L : loads) {
    if (L.kind == FusedLoad::Kind::Contiguous) continue;
    slot_buffer[L.slot] = take();
    if (L.kind == FusedLoad::Kind::Fill) persistent[slot_buffer[L.slot]] = true;
  }
  for (int s = 0; s < end; ++s) {
    const FusedStep& st = steps[s];
    int out = st.out;
    int reuse = -1;
    for (int a : st.args)
      if (reuse < 0 && slot_buffer[a] >= 0 && !persistent[slot_buffer[a]] && last_use[a] == s &&
          itemsize(slot_dtype[a]) == itemsize(slot_dtype[out]))
        reuse = a;
    if (direct_output[out] < 0) slot_buffer[out] = reuse >= 0 ? slot_buffer[reuse] : take();
    for (int a : st.args) {
      bool dies = last_use[a] == s && slot_buffer[a] >= 0 && !persistent[slot_buffer[a]];
      bool already = std::find(free_list.begin(), free_list.end(), slot_buffer[a]) != free_list.end();
      if (dies && !already && slot_buffer[a] != slot_buffer[out]) free_list.push_back(slot_buffer[a]);
    }
    if (last_use[out] < 0 && slot_buffer[out] >= 0) free_list.push_back(slot_buffer[out]);  // unused result
  }
  num_buffers = int(persistent.size());
  slot_bytes.assign(num_slots, 0);
  for (int s = 0; s < num_slots; ++s) slot_bytes[s] = uint8_t(itemsize(slot_dtype[s]));
  fill_loads.clear();
  tile_loads.clear();
  for (size_t i = 0; i < loads.size(); ++i) (loads[i].kind == FusedLoad::Kind::Fill ? fill_loads : tile_loads).push_back(int(i));
  direct_slots.clear();
  for (int s = 0; s < num_slots; ++s)
    if (direct_output[s] >= 0) direct_slots.push_back({s, direct_output[s]});
  // Buffers as wide as the widest slot that has one (slots merged or elided away have none).
  buffer_elem = 1;
  bool complex = false;
  for (int s = 0; s < num_slots; ++s) {
    if (slot_buffer[s] >= 0) buffer_elem = std::max<int64_t>(buffer_elem, int64_t(itemsize(slot_dtype[s])));
    complex = complex || is_complex(slot_dtype[s]);
  }
  // Work per element in units (a step, a gathered load, a reduction); scheduling is sized for
  // programs of up to kRefUnits, so that a task's work stays about the same.
  constexpr int64_t kRefUnits = 8;
  int64_t units = int64_t(steps.size() + reductions.size());
  for (const FusedLoad& L : loads) units += L.kind == FusedLoad::Kind::Strided;
  task_elements = kTaskElements * kRefUnits / std::max(kRefUnits, units);
  // A tile's buffers should stay in L2 together with the streams through it.
  // With complex values, one block of the complex loops (which split each block into its parts):
  // measured faster than longer tiles, whose blocks' part arrays and buffers alias each other.
  tile = complex ? 256 : num_buffers * buffer_elem > 64 ? 512 : 1024;
  if (n < tile) tile = std::max<int64_t>(n, 1);
}

bool FusedProgram::may_overwrite(int output, int input) const {
  int out_slot = -1, producer = -1;
  for (size_t s = 0; s < direct_output.size(); ++s)
    if (direct_output[s] == output) out_slot = int(s);
  if (out_slot < 0) return false;
  for (size_t s = 0; s < steps.size(); ++s)
    if (steps[s].out == out_slot) producer = int(s);
  for (const FusedLoad& L : loads) {
    if (L.input != input) continue;
    if (L.kind != FusedLoad::Kind::Contiguous || L.offset != 0) return false;
    if (itemsize(slot_dtype[L.slot]) != itemsize(slot_dtype[out_slot])) return false;
    for (size_t s = 0; s < steps.size(); ++s)
      for (int a : steps[s].args)
        if (a == L.slot && int(s) > producer) return false;
    for (const FusedStore& st : stores)
      if (st.slot == L.slot) return false;
    for (const FusedReduce& r : reductions)
      if (r.slot == L.slot) return false;
  }
  return true;
}

void FusedProgram::run(const void* const* inputs, void* const* outputs) const {
  if (reductions.empty()) return run_elementwise(inputs, outputs);
  if (n == 0) return run_empty(outputs);
  if (k1 == 1) return run_inner(inputs, outputs);
  run_outer(inputs, outputs);
}

void FusedProgram::run_elementwise(const void* const* inputs, void* const* outputs) const {
  if (n == 0) return;
  int64_t tiles = (n + tile - 1) / tile;
  auto body = [&](int64_t b, int64_t e) {
    Tile t(*this, inputs, outputs);
    for (int64_t i = b; i < e; ++i) t.compute(i * tile, std::min(tile, n - i * tile));
  };
  if (tiles == 1) return body(0, 1);
  parallel_for(tiles, std::max<int64_t>(1, task_elements / tile), body);
}

void FusedProgram::run_empty(void* const* outputs) const {
  int64_t count = k0 * k1;
  for (const FusedReduce& red : reductions) {
    const ReduceLoops& L = reduce_loops(red.op, red.dtype);
    std::unique_ptr<uint64_t[]> acc(new uint64_t[size_t(std::max<int64_t>(count, 1)) * 2]);  // (complex: 16 bytes)
    L.init(acc.get(), count);
    L.finish(outputs[red.output], acc.get(), count);
  }
}

std::string FusedProgram::describe() const {
  static const char* red_names[] = {"sum", "prod", "max", "min", "and", "or", "xor"};
  auto slot = [](int s) { return "$" + std::to_string(s); };
  std::string d = "n=" + std::to_string(n) + " tile=" + std::to_string(tile) + " buffers=" + std::to_string(num_buffers);
  for (const FusedLoad& L : loads) {
    const char* kind = L.kind == FusedLoad::Kind::Contiguous ? "load"
                       : L.kind == FusedLoad::Kind::Fill     ? "fill"
                       : L.kind == FusedLoad::Kind::Iota     ? "iota"
                                                             : "gather";
    d += "; " + slot(L.slot) + "=" + kind + (L.input >= 0 ? " in" + std::to_string(L.input) : std::string(" const"));
    if (L.offset) d += "+" + std::to_string(L.offset);
  }
  for (const FusedStep& st : steps) {
    d += "; " + slot(st.out) + "=" + st.name + "(";
    for (size_t k = 0; k < st.args.size(); ++k) d += (k ? "," : "") + slot(st.args[k]);
    d += ")";
  }
  for (const FusedStore& s : stores) d += "; out" + std::to_string(s.output) + "=" + slot(s.slot);
  for (const FusedReduce& red : reductions)
    d += std::string("; out") + std::to_string(red.output) + "=" + red_names[int(red.op)] + "(" + slot(red.slot) + ")";
  if (!reductions.empty())
    d += " over (" + std::to_string(k0) + "," + std::to_string(r) + "," + std::to_string(k1) + ")";
  return d;
}

}  // namespace xjax
