// Lowering a fused kernel spec to the CPU's tiled engine: loads and slots carry over one to one,
// each step gets its tile loop (a specialised fused loop where one exists), then CPU-only
// rewrites merge step patterns that have a faster combined loop.
#include "core/cpu/fused_lower.h"

#include <cstring>
#include <stdexcept>

#include "core/cpu/fused_loops.h"

namespace xjax {

namespace {

FusedLoad::Kind load_kind(KernelLoad::Kind k) {
  switch (k) {
    case KernelLoad::Kind::Contiguous: return FusedLoad::Kind::Contiguous;
    case KernelLoad::Kind::Fill: return FusedLoad::Kind::Fill;
    case KernelLoad::Kind::Strided: return FusedLoad::Kind::Strided;
    case KernelLoad::Kind::Iota: return FusedLoad::Kind::Iota;
  }
  return FusedLoad::Kind::Contiguous;
}

const FusedLoad* fill_of(const FusedProgram& p, int slot) {
  for (const FusedLoad& L : p.loads)
    if (L.slot == slot && L.kind == FusedLoad::Kind::Fill) return &L;
  return nullptr;
}

// The step's loop: a fused loop specialised for one-value operands when there is one.
FusedStep lower_step(const KernelStep& ks, const FusedProgram& p) {
  FusedStep st;
  unsigned scalars = 0;
  for (size_t k = 0; k < ks.args.size(); ++k)
    if (fill_of(p, ks.args[k])) scalars |= 1u << k;
  st.loop = fused_loop(ks.op, ks.arg_dtypes, ks.out_dtype, scalars);
  if (!st.loop) st.loop = elementwise_loop(ks.op, ks.arg_dtypes, ks.out_dtype, ks.attrs);
  if (!st.loop) throw std::logic_error(std::string("[fuse] no CPU loop for fused ") + op_name(ks.op));
  st.args = ks.args;
  st.out = ks.out;
  st.name = op_name(ks.op);
  st.op = ks.op;
  return st;
}

void drop_steps(FusedProgram& p, const std::vector<bool>& dropped) {
  std::vector<FusedStep> kept;
  for (size_t s = 0; s < p.steps.size(); ++s)
    if (!dropped[s]) kept.push_back(std::move(p.steps[s]));
  p.steps = std::move(kept);
}

// The merged select step `s` (of comparison cmp) takes over a later mul of its result by one
// value, when nothing else reads that result: the mul's output is then the select step's.
void merge_scale(FusedProgram& p, size_t s, OpId cmp, bool scalar_b, const std::vector<int>& uses,
                 std::vector<bool>& dropped) {
  FusedStep& sel = p.steps[s];
  if (uses[sel.out] != 1) return;
  for (size_t m = s + 1; m < p.steps.size(); ++m) {
    const FusedStep& mul = p.steps[m];
    if (mul.op != OpId::mul_ || mul.args.size() != 2 || (mul.args[0] != sel.out && mul.args[1] != sel.out)) continue;
    const int scale = mul.args[0] == sel.out ? 2 : 1, factor = mul.args[scale == 1 ? 0 : 1];
    if (!fill_of(p, factor) || p.slot_dtype[factor] != p.slot_dtype[sel.out]) return;
    ElementwiseLoop loop = fused_select_loop(cmp, p.slot_dtype[sel.out], scalar_b, scale);
    if (!loop) return;
    sel.loop = loop;
    sel.name += "_scaled";
    sel.args.push_back(factor);
    sel.out = mul.out;
    dropped[m] = true;
    return;
  }
}

// select_n(cmp(a, b), c0, c1) with the comparison's result used nowhere else becomes one step,
// and so does a multiply of that by one value when nothing else reads the select (selu's
// `scale * where(x > 0, x, ...)`).
void merge_select_compare(FusedProgram& p) {
  std::vector<int> uses(p.slot_dtype.size(), 0);
  for (const FusedStep& st : p.steps)
    for (int a : st.args) ++uses[a];
  for (const FusedStore& s : p.stores) ++uses[s.slot];
  for (const FusedReduce& r : p.reductions) ++uses[r.slot];
  std::vector<bool> dropped(p.steps.size(), false);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    FusedStep& sel = p.steps[s];
    if (sel.op != OpId::select_n_ || sel.args.size() != 3 || uses[sel.args[0]] != 1) continue;
    for (size_t c = 0; c < s; ++c) {
      const FusedStep& cmp = p.steps[c];
      if (dropped[c] || cmp.out != sel.args[0] || cmp.args.size() != 2) continue;
      DType dt = p.slot_dtype[cmp.args[0]];
      if (p.slot_dtype[sel.args[1]] != dt || p.slot_dtype[sel.args[2]] != dt) break;
      ElementwiseLoop loop = fused_select_loop(cmp.op, dt, fill_of(p, cmp.args[1]) != nullptr);
      if (!loop) break;
      sel.loop = loop;
      sel.name = "select_" + cmp.name;
      sel.args = {cmp.args[0], cmp.args[1], sel.args[1], sel.args[2]};
      dropped[c] = true;
      merge_scale(p, s, cmp.op, fill_of(p, cmp.args[1]) != nullptr, uses, dropped);
      break;
    }
  }
  drop_steps(p, dropped);
}

// threefry2x32 whose packed result is only split into its two words and xor-ed (random bits:
// shift_right_logical by 32, two conversions to uint32, xor) becomes one step.
void merge_threefry_xor(FusedProgram& p) {
  const int num_slots = int(p.slot_dtype.size());
  std::vector<int> uses(num_slots, 0), producer(num_slots, -1);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    for (int a : p.steps[s].args) ++uses[a];
    producer[p.steps[s].out] = int(s);
  }
  for (const FusedStore& s : p.stores) uses[s.slot] += 2;  // an output: never merged away
  for (const FusedReduce& r : p.reductions) uses[r.slot] += 2;
  auto is32 = [&](int slot) {  // a filled uint64 constant 32
    const FusedLoad* L = fill_of(p, slot);
    uint64_t v = 0;
    if (!L || L->input >= 0 || L->value.size() != 8) return false;
    std::memcpy(&v, L->value.data(), 8);
    return v == 32;
  };
  std::vector<bool> dropped(p.steps.size(), false);
  for (size_t x = 0; x < p.steps.size(); ++x) {
    FusedStep& xs = p.steps[x];
    if (xs.op != OpId::bitwise_xor_ || p.slot_dtype[xs.out] != DType::UInt32) continue;
    int hi = producer[xs.args[0]], lo = producer[xs.args[1]];
    if (hi < 0 || lo < 0) continue;
    if (p.steps[hi].op == OpId::convert_element_type_ && p.steps[lo].op == OpId::convert_element_type_ &&
        producer[p.steps[lo].args[0]] >= 0 && p.steps[producer[p.steps[lo].args[0]]].op == OpId::shift_right_logical_)
      std::swap(hi, lo);
    const FusedStep &h = p.steps[hi], &l = p.steps[lo];
    if (h.op != OpId::convert_element_type_ || l.op != OpId::convert_element_type_) continue;
    int sh = producer[h.args[0]];
    if (sh < 0 || p.steps[sh].op != OpId::shift_right_logical_ || !is32(p.steps[sh].args[1])) continue;
    int tf = producer[l.args[0]];
    if (tf < 0 || p.steps[tf].op != OpId::threefry2x32_ || p.steps[sh].args[0] != p.steps[tf].out ||
        p.slot_dtype[p.steps[tf].out] != DType::UInt64)
      continue;
    int packed = p.steps[tf].out;
    if (uses[packed] != 2 || uses[p.steps[sh].out] != 1 || uses[h.out] != 1 || uses[l.out] != 1) continue;
    const auto& ka = p.steps[tf].args;
    bool scalar_keys = fill_of(p, ka[0]) && fill_of(p, ka[1]);
    FusedStep merged;
    merged.loop = ew::threefry_xor_loop(scalar_keys);
    merged.args = ka;
    merged.out = xs.out;
    merged.name = "threefry2x32_xor";
    merged.op = OpId::threefry2x32_;
    p.steps[tf] = merged;  // where the cipher ran: its operands are ready there
    dropped[sh] = dropped[hi] = dropped[lo] = dropped[x] = true;
  }
  drop_steps(p, dropped);
}

// A bitcast between types of one size copies a tile's bytes: its readers read its operand's slot
// instead (the loops take untyped tiles), and the step goes.
void elide_bitcasts(FusedProgram& p) {
  std::vector<bool> dropped(p.steps.size(), false);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const FusedStep& bc = p.steps[s];
    if (bc.op != OpId::bitcast_convert_type_ || bc.args.size() != 1) continue;
    const int from = bc.args[0], to = bc.out;
    if (itemsize(p.slot_dtype[from]) != itemsize(p.slot_dtype[to])) continue;
    for (size_t t = s + 1; t < p.steps.size(); ++t)
      for (int& a : p.steps[t].args) a = a == to ? from : a;
    for (FusedStore& st : p.stores) st.slot = st.slot == to ? from : st.slot;
    for (FusedReduce& r : p.reductions) r.slot = r.slot == to ? from : r.slot;
    dropped[s] = true;
  }
  drop_steps(p, dropped);
}

// Loads whose slot no step, store or reduction reads any more (the operands of merged steps, such as
// the shift by 32 of random bits) go: no buffer to fill.
void drop_dead_loads(FusedProgram& p) {
  std::vector<bool> read(p.slot_dtype.size(), false);
  for (const FusedStep& st : p.steps)
    for (int a : st.args) read[a] = true;
  for (const FusedStore& s : p.stores) read[s.slot] = true;
  for (const FusedReduce& r : p.reductions) read[r.slot] = true;
  std::vector<FusedLoad> kept;
  for (FusedLoad& L : p.loads)
    if (read[L.slot]) kept.push_back(std::move(L));
  p.loads = std::move(kept);
}

bool cpu_can_fuse(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs) {
  if (op_info(op).kind == OpKind::Reduction) return true;  // the fused reduction loops take every dtype
  return elementwise_loop(op, in, out, attrs) != nullptr;
}

}  // namespace

const BackendCaps& cpu_caps() {
  static const BackendCaps caps{"cpu", cpu_can_fuse};
  return caps;
}

std::shared_ptr<FusedProgram> lower_to_cpu(const FusedKernelSpec& spec) {
  auto prog = std::make_shared<FusedProgram>();
  FusedProgram& p = *prog;
  p.n = spec.n;
  p.k0 = spec.k0, p.r = spec.r, p.k1 = spec.k1;
  p.slot_dtype = spec.slot_dtype;
  p.loads.reserve(spec.loads.size());
  p.steps.reserve(spec.steps.size());
  for (const KernelLoad& kl : spec.loads) {
    FusedLoad L;
    L.kind = load_kind(kl.kind);
    L.input = kl.input;
    L.offset = kl.offset;
    L.value = kl.value;
    L.shape = kl.shape;
    L.strides = kl.strides;
    L.iota_inner = kl.iota_inner, L.iota_len = kl.iota_len;
    L.slot = kl.slot;
    p.loads.push_back(std::move(L));
  }
  for (const KernelStep& ks : spec.steps) p.steps.push_back(lower_step(ks, p));
  for (const KernelStore& s : spec.stores) p.stores.push_back({s.slot, s.output});
  for (const KernelReduction& r : spec.reductions) p.reductions.push_back({r.op, r.dtype, r.slot, r.output});
  merge_select_compare(p);
  merge_threefry_xor(p);
  elide_bitcasts(p);
  drop_dead_loads(p);
  p.num_inputs = int(spec.inputs.size());
  p.num_outputs = int(spec.outputs.size());
  p.finalize();
  return prog;
}

}  // namespace xjax
