// The backend-neutral kernel spec of fused groups: index maps of its loads, steps keeping their
// attributes, stores and reductions; fusion asking a backend's capabilities; the CPU lowering
// (merged steps, results against the reference interpreter). Exits non-zero on the first failure.
#include <cmath>
#include <cstring>
#include <random>

#include "core/compiler/executable.h"
#include "core/compiler/plan.h"
#include "core/cpu/fused_lower.h"
#include "core/reference/interpreter.h"
#include "check.h"
#include "graph_builders.h"

using namespace xjax;

namespace {

using test::bcast;
using test::op;
using test::scalar;

ValueRef iota(Graph& g, const Shape& shape, int64_t dim) {
  Attrs a;
  a.set("dtype", std::string("float32"));
  a.set("shape", shape);
  a.set("dimension", dim);
  return op(g, OpId::iota_, {}, a);
}

std::vector<const Step*> fused_steps(const Plan& plan) {
  std::vector<const Step*> out;
  for (const Step& s : plan.steps)
    if (s.kind == Step::Kind::Fused) out.push_back(&s);
  return out;
}

const KernelLoad* load_of(const FusedKernelSpec& spec, int slot) {
  for (const KernelLoad& L : spec.loads)
    if (L.slot == slot) return &L;
  return nullptr;
}

// round(integer_pow(x, 3) + broadcast row y, half to even), times a slice of z, times x, times 2, plus
// iotas along both dims; stored, and summed over dim 1. One fused group.
Graph spec_graph() {
  Graph g;
  ValueRef x = g.parameter({{4, 3}, DType::Float32});
  ValueRef y = g.parameter({{3}, DType::Float32});
  ValueRef z = g.parameter({{6, 5}, DType::Float32});
  Attrs pow3, even, sl, axes;
  pow3.set("y", int64_t(3));
  even.set("rounding_method", int64_t(1));
  sl.set("start_indices", std::vector<int64_t>{1, 2});
  sl.set("limit_indices", std::vector<int64_t>{5, 5});
  axes.set("axes", std::vector<int64_t>{1});
  ValueRef a = op(g, OpId::add_, {op(g, OpId::integer_pow_, {x}, pow3), bcast(g, y, {4, 3}, {1})});
  ValueRef p = op(g, OpId::round_, {a}, even);
  ValueRef b = op(g, OpId::mul_, {op(g, OpId::mul_, {p, op(g, OpId::slice_, {z}, sl)}), x});
  ValueRef c = op(g, OpId::mul_, {b, bcast(g, scalar(g, 2), {4, 3}, {})});
  ValueRef d = op(g, OpId::add_, {op(g, OpId::add_, {c, iota(g, {4, 3}, 0)}), iota(g, {4, 3}, 1)});
  g.set_outputs({d, op(g, OpId::reduce_sum_, {d}, axes)});
  return g;
}

void test_spec_of_a_group() {
  Graph g = spec_graph();
  Plan plan = build_plan(g, CompileOptions());
  std::vector<const Step*> fused = fused_steps(plan);
  CHECK(fused.size() == 1);
  if (fused.size() != 1 || !fused[0]->spec) return;
  const FusedKernelSpec& spec = *fused[0]->spec;
  CHECK(spec.n == 12 && spec.k0 == 4 && spec.r == 3 && spec.k1 == 1);
  CHECK(spec.inputs == fused[0]->inputs && spec.outputs == fused[0]->outputs);
  CHECK(spec.inputs.size() == 3);  // x, y, z, each once
  CHECK(spec.input_types.size() == 3 && spec.input_types[2].shape == Shape({6, 5}));
  CHECK(spec.output_types.size() == 2 && spec.output_types[0].shape == Shape({4, 3}) &&
        spec.output_types[1].shape == Shape({4}));

  // Loads: x contiguous (read once though used twice), y broadcast along rows, z's slice at
  // offset 1*5+2 with z's strides, the constant 2 as a fill, the two iotas.
  int contiguous = 0, strided = 0, fills = 0, iotas = 0;
  for (const KernelLoad& L : spec.loads) {
    CHECK(spec.slot_dtype[L.slot] == DType::Float32);
    switch (L.kind) {
      case KernelLoad::Kind::Contiguous:
        ++contiguous;
        CHECK(L.input >= 0 && spec.input_types[L.input].shape == Shape({4, 3}) && L.offset == 0);
        break;
      case KernelLoad::Kind::Strided:
        ++strided;
        if (spec.input_types[L.input].shape == Shape({3})) {
          CHECK(L.shape == Shape({4, 3}) && L.strides == std::vector<int64_t>({0, 1}) && L.offset == 0);
        } else {
          CHECK(L.shape == Shape({4, 3}) && L.strides == std::vector<int64_t>({5, 1}) && L.offset == 7);
        }
        break;
      case KernelLoad::Kind::Fill: {
        ++fills;
        float v = 0;
        CHECK(L.input < 0 && L.value.size() == 4);
        if (L.value.size() == 4) std::memcpy(&v, L.value.data(), 4);
        CHECK(v == 2.0f);
        break;
      }
      case KernelLoad::Kind::Iota:
        ++iotas;
        CHECK(L.input < 0);
        CHECK((L.iota_inner == 3 && L.iota_len == 4) || (L.iota_inner == 1 && L.iota_len == 3));
        break;
    }
  }
  CHECK(contiguous == 1 && strided == 2 && fills == 1 && iotas == 2);

  // Steps keep their attributes; operands name slots of the right dtypes.
  bool saw_pow = false, saw_round = false;
  for (const KernelStep& st : spec.steps) {
    CHECK(st.args.size() == st.arg_dtypes.size() && st.out_dtype == spec.slot_dtype[st.out]);
    for (size_t k = 0; k < st.args.size(); ++k) CHECK(st.arg_dtypes[k] == spec.slot_dtype[st.args[k]]);
    if (st.op == OpId::integer_pow_) {
      saw_pow = true;
      CHECK(st.attrs.get_int("y") == 3);
      const KernelLoad* L = load_of(spec, st.args[0]);
      CHECK(L && L->kind == KernelLoad::Kind::Contiguous);
    }
    if (st.op == OpId::round_) {
      saw_round = true;
      CHECK(st.attrs.get_int("rounding_method") == 1);
    }
  }
  CHECK(saw_pow && saw_round && spec.steps.size() == 8);
  CHECK(spec.stores.size() == 1 && spec.stores[0].output == 0 && spec.stores[0].slot == spec.steps.back().out);
  CHECK(spec.reductions.size() == 1 && spec.reductions[0].op == RedOp::Sum && spec.reductions[0].output == 1 &&
        spec.reductions[0].slot == spec.steps.back().out && spec.reductions[0].dtype == DType::Float32);
  std::string d = spec.describe();
  CHECK(d.find("integer_pow[y=3]($") != std::string::npos);
  CHECK(d.find("round[rounding_method=1]($") != std::string::npos);
  CHECK(d.find("float32=gather in2(4, 3):(5, 1)+7") != std::string::npos);
  CHECK(d.find("fill 0x40000000") != std::string::npos);
  CHECK(d.find("over (4,3,1)") != std::string::npos);
}

// The lowering runs what the spec says: the compiled graph against the reference interpreter
// (with ties for round half to even: x^3 + y lands on k + 0.5 for integer x and y = 0.5 * odd).
void test_lowering_runs_the_spec() {
  Graph g = spec_graph();
  std::mt19937 rng(3);
  std::vector<Array> in;
  for (const TypeInfo& t : g.parameter_types()) {
    Array a = Array::empty(t.shape, t.dtype);
    for (int64_t i = 0; i < a.size(); ++i) static_cast<float*>(a.data())[i] = float(int(rng() % 9) - 4) * 0.5f;
    in.push_back(a);
  }
  auto exe = compile(g);
  std::vector<Array> got = exe->run(in), want = reference_run(g, in);
  for (size_t o = 0; o < got.size(); ++o) {
    got[o].wait();
    CHECK(got[o].size() == want[o].size());
    CHECK(std::memcmp(got[o].data(), want[o].data(), size_t(got[o].size()) * 4) == 0);
  }
}

// select_n(gt(a, b), c, d): two steps in the spec, one merged loop in the CPU program.
void test_cpu_merges_are_the_lowerings() {
  Graph g;
  ValueRef a = g.parameter({{100}, DType::Float32}), b = g.parameter({{100}, DType::Float32});
  ValueRef c = op(g, OpId::sin_, {a}), d = op(g, OpId::cos_, {b});
  g.set_outputs({op(g, OpId::select_n_, {op(g, OpId::gt_, {a, b}), c, d})});
  Plan plan = build_plan(g, CompileOptions());
  std::vector<const Step*> fused = fused_steps(plan);
  CHECK(fused.size() == 1);
  if (fused.size() != 1) return;
  CHECK(fused[0]->spec->steps.size() == 4);
  std::shared_ptr<FusedProgram> program = lower_to_cpu(*fused[0]->spec);
  CHECK(program->steps.size() == 3);
  CHECK(program->describe().find("select_gt(") != std::string::npos);
}

bool no_exp(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs) {
  return op != OpId::exp_ && cpu_caps().can_fuse(op, in, out, attrs);
}

// Fusion asks the backend: an op it cannot fuse splits the chain into groups around it.
void test_fusion_asks_the_backend() {
  Graph g;
  ValueRef x = g.parameter({{64}, DType::Float32});
  ValueRef e = op(g, OpId::exp_, {op(g, OpId::cos_, {op(g, OpId::sin_, {x})})});
  g.set_outputs({op(g, OpId::neg_, {op(g, OpId::tanh_, {e})})});
  Fusion cpu = fuse(g);
  CHECK(cpu.groups.size() == 1 && cpu.groups[0].fused);
  const BackendCaps caps{"no-exp", no_exp};
  Fusion split = fuse(g, true, caps);
  CHECK(split.groups.size() == 3);
  if (split.groups.size() != 3) return;
  CHECK(split.groups[0].fused && split.groups[0].nodes.size() == 2);
  CHECK(!split.groups[1].fused && g.nodes()[split.groups[1].nodes[0]].op == OpId::exp_);
  CHECK(split.groups[2].fused && split.groups[2].nodes.size() == 2);
  CHECK(fusible(g, g.nodes()[e.node], cpu_caps()) && !fusible(g, g.nodes()[e.node], caps));
}

}  // namespace

int main() {
  test_spec_of_a_group();
  test_lowering_runs_the_spec();
  test_cpu_merges_are_the_lowerings();
  test_fusion_asks_the_backend();
  return check_report();
}
