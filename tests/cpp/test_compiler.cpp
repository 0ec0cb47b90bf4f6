// The graph compiler from C++: passes by node counts, fused kernels against the reference
// interpreter on random graphs, a while loop and the counted-loop analysis, execute()'s checks.
// Exits non-zero on the first failure.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/compiler/executable.h"
#include "core/compiler/passes.h"
#include "core/reference/interpreter.h"
#include "check.h"
#include "graph_builders.h"

using namespace xjax;

namespace {

using test::bcast;
using test::op;
using test::scalar;

int count(const Graph& g, OpId id) {
  int c = 0;
  for (const Node& n : g.nodes()) c += n.op == id;
  return c;
}

Array random_array(const Shape& shape, std::mt19937& rng) {
  Array a = Array::empty(shape, DType::Float32);
  std::uniform_real_distribution<float> d(-2, 2);
  for (int64_t i = 0; i < a.size(); ++i) static_cast<float*>(a.data())[i] = d(rng);
  return a;
}

void test_passes() {
  Graph g;
  ValueRef x = g.parameter({{4}, DType::Float32});
  op(g, OpId::sin_, {x});  // dead
  ValueRef e1 = op(g, OpId::exp_, {x}), e2 = op(g, OpId::exp_, {x});
  ValueRef six = op(g, OpId::mul_, {scalar(g, 2), scalar(g, 3)});
  g.set_outputs({op(g, OpId::mul_, {op(g, OpId::add_, {e1, e2}), bcast(g, six, {4}, {})})});
  Graph opt = run_passes(g, default_passes());
  verify(opt);
  CHECK(count(opt, OpId::sin_) == 0);
  CHECK(count(opt, OpId::exp_) == 1);
  CHECK(count(opt, OpId::constant_) == 1);
  auto exe = compile(g);
  CHECK(exe->num_kernels() == 1);
}

// A random chain of elementwise ops over (rows, cols) with broadcast operands and a reduction.
void test_random_graphs() {
  std::mt19937 rng(7);
  const OpId unary[] = {OpId::neg_, OpId::sin_, OpId::tanh_, OpId::abs_, OpId::exp_};
  const OpId binary[] = {OpId::add_, OpId::sub_, OpId::mul_, OpId::max_, OpId::min_};
  for (int trial = 0; trial < 40; ++trial) {
    int64_t rows = 1 + rng() % 40, cols = 1 + rng() % 3000;
    Shape shape{rows, cols};
    Graph g;
    std::vector<ValueRef> vals{g.parameter({shape, DType::Float32})};
    vals.push_back(bcast(g, g.parameter({{cols}, DType::Float32}), shape, {1}));
    vals.push_back(bcast(g, scalar(g, 0.5), shape, {}));
    for (int k = 0; k < 6; ++k) {
      ValueRef a = vals[rng() % vals.size()], b = vals[rng() % vals.size()];
      if (rng() % 2) vals.push_back(op(g, unary[rng() % 5], {op(g, OpId::tanh_, {a})}));
      else vals.push_back(op(g, binary[rng() % 5], {a, b}));
    }
    Attrs axes;
    axes.set("axes", std::vector<int64_t>{int64_t(rng() % 2)});
    g.set_outputs({vals.back(), op(g, OpId::reduce_sum_, {vals.back()}, axes)});
    std::vector<Array> in{random_array(shape, rng), random_array({cols}, rng)};
    auto exe = compile(g);
    std::vector<Array> got;
    for (const TypeInfo& t : exe->output_types()) got.push_back(Array::empty(t.shape, t.dtype));
    exe->execute(in, got);
    std::vector<Array> want = reference_run(g, in);
    for (size_t o = 0; o < got.size(); ++o) {
      const float* p = static_cast<const float*>(got[o].data());
      const float* q = static_cast<const float*>(want[o].data());
      bool ok = true;
      for (int64_t i = 0; i < got[o].size(); ++i) ok = ok && std::fabs(p[i] - q[i]) <= 1e-4f * (1 + std::fabs(q[i]));
      CHECK(ok);
    }
  }
}

void test_while() {
  Graph cond, body, g;
  ValueRef ci = cond.parameter({{}, DType::Int32});
  cond.set_outputs({op(cond, OpId::lt_, {ci, scalar(cond, 5, DType::Int32)})});
  ValueRef bi = body.parameter({{}, DType::Int32});
  body.set_outputs({op(body, OpId::add_, {bi, scalar(body, 2, DType::Int32)})});
  ValueRef i0 = g.parameter({{}, DType::Int32});
  g.set_outputs(g.add_subgraph_op(OpId::while_, {i0}, {}, {std::make_shared<Graph>(cond), std::make_shared<Graph>(body)}));
  auto exe = compile(g);
  Array start = Array::empty({}, DType::Int32);
  *static_cast<int32_t*>(start.data()) = 0;
  std::vector<Array> out = exe->run({start});
  out[0].wait();
  CHECK(*static_cast<int32_t*>(out[0].data()) == 6);
}

// A loop body whose frame is bound once per loop (run_while): a carry passed through, two swapped
// pairwise, one updated in its window (dynamic_update_slice at the counter), one computed from a
// reduction held in the body's pool, one computed over a pooled value (a kernel's result: it gets
// the buffer its previous value left, output_takes_buffer). Against the reference interpreter, run
// twice (the pool and the frame's buffers are reused), also into given outputs: the target of the
// sanitizer builds.
void test_while_body_frame() {
  const Shape v8{8}, v4{4}, v10{10}, v2{2};
  Graph cond, body, g;
  ValueRef ci = cond.parameter({{}, DType::Int32});
  for (const Shape& s : {v8, v4, v4, v10, v4, v4}) cond.parameter({s, DType::Float32});
  cond.set_outputs({op(cond, OpId::lt_, {ci, scalar(cond, 8, DType::Int32)})});
  ValueRef i = body.parameter({{}, DType::Int32});
  ValueRef a = body.parameter({v8, DType::Float32}), b = body.parameter({v4, DType::Float32});
  ValueRef c = body.parameter({v4, DType::Float32}), buf = body.parameter({v10, DType::Float32});
  ValueRef d = body.parameter({v4, DType::Float32}), e = body.parameter({v4, DType::Float32});
  Attrs all;
  all.set("axes", std::vector<int64_t>{0});
  Attrs to_f32;
  to_f32.set("new_dtype", std::string("float32"));
  ValueRef s = op(body, OpId::mul_, {op(body, OpId::reduce_sum_, {op(body, OpId::sin_, {a})}, all),
                                     op(body, OpId::convert_element_type_, {i}, to_f32)});
  ValueRef window = op(body, OpId::dynamic_update_slice_, {buf, bcast(body, s, v2, {}), i});
  ValueRef d_next = op(body, OpId::add_, {op(body, OpId::mul_, {d, bcast(body, scalar(body, 0.5), v4, {})}),
                                          bcast(body, s, v4, {})});
  Attrs along;
  along.set("axis", int64_t(0));
  ValueRef e_next = op(body, OpId::sin_, {op(body, OpId::cumsum_, {e}, along)});
  body.set_outputs({op(body, OpId::add_, {i, scalar(body, 1, DType::Int32)}), a, c, b, window, d_next, e_next});
  std::vector<ValueRef> init{g.parameter({{}, DType::Int32})};
  for (const Shape& sh : {v8, v4, v4, v10, v4, v4}) init.push_back(g.parameter({sh, DType::Float32}));
  g.set_outputs(g.add_subgraph_op(OpId::while_, init, {}, {std::make_shared<Graph>(cond), std::make_shared<Graph>(body)}));
  auto exe = compile(g);
  CompileOptions reference;
  reference.reference = true;
  auto ref = compile(g, reference);
  std::mt19937 rng(3);
  const std::string text = exe->plan_text();  // the body has what this test is for
  CHECK(text.find("window(out0 at %0)") != std::string::npos && text.find(": buf0") != std::string::npos &&
        text.find(": output in-place") != std::string::npos);
  std::vector<Array> in{Array::empty({}, DType::Int32)};
  *static_cast<int32_t*>(in[0].data()) = 1;
  for (const Shape& sh : {v8, v4, v4, v10, v4, v4}) in.push_back(random_array(sh, rng));
  std::vector<Array> want = ref->run(in);
  for (int round = 0; round < 3; ++round) {
    std::vector<Array> got;
    if (round < 2) got = exe->run(in);
    else {
      for (const TypeInfo& t : exe->output_types()) got.push_back(Array::empty(t.shape, t.dtype));
      exe->execute(in, got);
    }
    for (size_t o = 0; o < got.size(); ++o) {
      got[o].wait();
      want[o].wait();
      CHECK(got[o].nbytes() == want[o].nbytes());
      if (o == 0) {
        CHECK(*static_cast<const int32_t*>(got[0].data()) == 8);
        continue;
      }
      const float* p = static_cast<const float*>(got[o].data());
      const float* q = static_cast<const float*>(want[o].data());
      bool ok = true;
      for (int64_t k = 0; k < got[o].size(); ++k) ok = ok && std::fabs(p[k] - q[k]) <= 1e-5f * (1 + std::fabs(q[k]));
      CHECK(ok);
    }
    // Seven iterations: the passed-through carry is the input's values, the swapped pair crossed.
    CHECK(std::memcmp(got[1].data(), in[1].data(), 32) == 0);
    CHECK(std::memcmp(got[2].data(), in[3].data(), 16) == 0 && std::memcmp(got[3].data(), in[2].data(), 16) == 0);
  }
}

// pack_loop_carries: five scalar leaves c = c * w + 1 (w passed through) become two carried arrays of
// five lanes; the condition's counter stays apart; the results keep their bits.
void test_pack_loop_carries() {
  const int k = 5;
  std::vector<TypeInfo> types{{{}, DType::Int32}};
  for (int j = 0; j < 2 * k; ++j) types.push_back({{}, DType::Float32});
  Graph cond, body, g;
  std::vector<ValueRef> cp, bp, init;
  for (const TypeInfo& t : types) cp.push_back(cond.parameter(t)), bp.push_back(body.parameter(t)), init.push_back(g.parameter(t));
  cond.set_outputs({op(cond, OpId::lt_, {cp[0], scalar(cond, 6, DType::Int32)})});
  std::vector<ValueRef> outs{op(body, OpId::add_, {bp[0], scalar(body, 1, DType::Int32)})};
  for (int j = 0; j < k; ++j) outs.push_back(bp[1 + j]);
  for (int j = 0; j < k; ++j)
    outs.push_back(op(body, OpId::add_, {op(body, OpId::mul_, {bp[1 + k + j], bp[1 + j]}), scalar(body, 1.0)}));
  body.set_outputs(outs);
  g.set_outputs(g.add_subgraph_op(OpId::while_, init, {}, {std::make_shared<Graph>(cond), std::make_shared<Graph>(body)}));
  Graph packed = pack_loop_carries(g);
  verify(packed);
  int loops = 0;
  for (const Node& n : packed.nodes())
    if (n.op == OpId::while_) {
      ++loops;
      CHECK(n.inputs.size() == 3 && n.outputs[1].shape == Shape{k} && n.outputs[2].shape == Shape{k});
      CHECK(recognize_counted_loop(*n.subgraphs[0]).counter == 0);
    }
  CHECK(loops == 1);
  std::vector<Array> in{Array::empty({}, DType::Int32)};
  *static_cast<int32_t*>(in[0].data()) = 0;
  std::mt19937 rng(5);
  for (int j = 0; j < 2 * k; ++j) in.push_back(random_array({}, rng));
  CompileOptions plain = default_compile_options();
  CHECK(plain.passes[0] == "pack_loops");
  plain.passes.erase(plain.passes.begin());
  std::vector<Array> got = compile(g)->run(in), want = compile(g, plain)->run(in);
  for (size_t o = 0; o < got.size(); ++o) {
    got[o].wait();
    want[o].wait();
    CHECK(std::memcmp(got[o].data(), want[o].data(), got[o].nbytes()) == 0);
  }
}

// recognize_counted_loop finds `carry < int32 constant` conditions and nothing else; the plan keeps
// what it found on the while step, and both kinds of loop run to the same answer.
void test_counted_loop_recognition() {
  auto condition = [](OpId cmp, bool counter_first, DType dt, bool through_add) {
    Graph c;
    c.parameter({{3}, DType::Float32});
    ValueRef i = c.parameter({{}, dt});
    if (through_add) i = op(c, OpId::add_, {i, scalar(c, 1, dt)});
    ValueRef n = scalar(c, 7, dt);
    c.set_outputs({op(c, cmp, {counter_first ? i : n, counter_first ? n : i})});
    return c;
  };
  const CountedLoop counted = recognize_counted_loop(condition(OpId::lt_, true, DType::Int32, false));
  CHECK(counted.found() && counted.counter == 1 && counted.bound == 7);
  CHECK(!recognize_counted_loop(condition(OpId::le_, true, DType::Int32, false)).found());
  CHECK(!recognize_counted_loop(condition(OpId::lt_, false, DType::Int32, false)).found());
  CHECK(!recognize_counted_loop(condition(OpId::lt_, true, DType::Int64, false)).found());
  CHECK(!recognize_counted_loop(condition(OpId::lt_, true, DType::Int32, true)).found());
  Graph two;  // a bound that is another carry
  ValueRef i = two.parameter({{}, DType::Int32}), n = two.parameter({{}, DType::Int32});
  two.set_outputs({op(two, OpId::lt_, {i, n})});
  CHECK(!recognize_counted_loop(two).found());

  for (OpId cmp : {OpId::lt_, OpId::le_}) {  // i += 2 while i < 7 (counted) or i <= 7 (not)
    Graph cond, body, g;
    ValueRef ci = cond.parameter({{}, DType::Int32});
    cond.set_outputs({op(cond, cmp, {ci, scalar(cond, 7, DType::Int32)})});
    ValueRef bi = body.parameter({{}, DType::Int32});
    body.set_outputs({op(body, OpId::add_, {bi, scalar(body, 2, DType::Int32)})});
    ValueRef i0 = g.parameter({{}, DType::Int32});
    g.set_outputs(g.add_subgraph_op(OpId::while_, {i0}, {}, {std::make_shared<Graph>(cond), std::make_shared<Graph>(body)}));
    auto exe = compile(g);
    const Step& loop = exe->plan().steps.back();
    CHECK(loop.kind == Step::Kind::While && loop.counted.found() == (cmp == OpId::lt_));
    CHECK((exe->plan_text().find("counted(carry 0 < 7)") != std::string::npos) == (cmp == OpId::lt_));
    Array start = Array::empty({}, DType::Int32);
    *static_cast<int32_t*>(start.data()) = 1;
    std::vector<Array> out = exe->run({start});
    out[0].wait();
    CHECK(*static_cast<int32_t*>(out[0].data()) == (cmp == OpId::lt_ ? 7 : 9));
  }
}

// threefry2x32 on Random123's known answer, fused with the iota of its counters and the xor of its
// words (what 32-bit random bits compute), against the reference interpreter.
void test_threefry_bits() {
  const int64_t n = 3000;
  Graph g;
  ValueRef k0 = g.parameter({{}, DType::UInt32}), k1 = g.parameter({{}, DType::UInt32});
  Attrs ia;
  ia.set("dtype", std::string("uint32"));
  ia.set("shape", Shape{n});
  ia.set("dimension", int64_t(0));
  ValueRef counts = op(g, OpId::iota_, {}, ia);
  ValueRef packed = op(g, OpId::threefry2x32_, {k0, k1, scalar(g, 0, DType::UInt32), counts});
  Attrs to32;
  to32.set("new_dtype", std::string("uint32"));
  ValueRef hi = op(g, OpId::convert_element_type_, {op(g, OpId::shift_right_logical_, {packed, scalar(g, 32, DType::UInt64)})}, to32);
  ValueRef lo = op(g, OpId::convert_element_type_, {packed}, to32);
  g.set_outputs({op(g, OpId::bitwise_xor_, {hi, lo}), packed});
  auto exe = compile(g);
  CompileOptions reference;
  reference.reference = true;
  auto ref = compile(g, reference);
  Array a = Array::empty({}, DType::UInt32), b = Array::empty({}, DType::UInt32);
  *static_cast<uint32_t*>(a.data()) = 0x13198a2e;
  *static_cast<uint32_t*>(b.data()) = 0x03707344;
  std::vector<Array> got = exe->run({a, b}), want = ref->run({a, b});
  for (Array& x : got) x.wait();
  for (Array& x : want) x.wait();
  CHECK(std::memcmp(got[0].data(), want[0].data(), n * 4) == 0);
  CHECK(std::memcmp(got[1].data(), want[1].data(), n * 8) == 0);
  *static_cast<uint32_t*>(a.data()) = 0;
  *static_cast<uint32_t*>(b.data()) = 0;
  got = exe->run({a, b});
  got[1].wait();
  CHECK(static_cast<const uint64_t*>(got[1].data())[0] == 0x6b20015999ba4efeull);  // key 0, counter (0, 0)
}

// Whether f() throws an exception whose message contains `text`.
template <typename F>
bool raises(F f, const std::string& text) {
  try {
    f();
  } catch (const std::exception& e) {
    if (std::string(e.what()).find(text) != std::string::npos) return true;
    std::printf("unexpected message: %s\n", e.what());
  }
  return false;
}

// execute() checks arguments as run() does, and outputs: type, size of buffer, no aliasing.
void test_execute_checks_its_arguments_and_outputs() {
  Graph g;
  ValueRef x = g.parameter({{4}, DType::Float32});
  g.set_outputs({op(g, OpId::neg_, {x}), bcast(g, scalar(g, 2), {4}, {})});
  auto exe = compile(g);
  Array in = Array::empty({4}, DType::Float32);
  for (int i = 0; i < 4; ++i) static_cast<float*>(in.data())[i] = float(i);
  auto fresh = [] { return std::vector<Array>{Array::empty({4}, DType::Float32), Array::empty({4}, DType::Float32)}; };
  std::vector<Array> out = fresh();
  exe->execute({in}, out);
  CHECK(static_cast<float*>(out[0].data())[3] == -3 && static_cast<float*>(out[1].data())[3] == 2);

  CHECK(raises([&] { exe->execute({}, fresh()); }, "expected 1 arguments, got 0"));
  Array wrong = Array::empty({3}, DType::Float32);
  CHECK(raises([&] { exe->execute({wrong}, fresh()); }, "argument 0 should be float32(4,)"));
  Array short_in = in;
  short_in.buffer = Buffer::allocate(8);
  CHECK(raises([&] { exe->execute({short_in}, fresh()); }, "argument 0 (float32(4,)) has no buffer of the 16 bytes"));
  CHECK(raises([&] { exe->execute({in}, {out[0]}); }, "expected 2 outputs, got 1"));
  Array ints = Array::empty({4}, DType::Int32);
  CHECK(raises([&] { exe->execute({in}, {out[0], ints}); }, "output 1 (int32(4,)) should be float32(4,)"));
  Array short_out = out[1];
  short_out.buffer = Buffer::allocate(4);
  CHECK(raises([&] { exe->execute({in}, {out[0], short_out}); }, "output 1 (float32(4,)) has no buffer of the 16"));
  CHECK(raises([&] { exe->execute({in}, {in, out[1]}); }, "output 0 (float32(4,)) is argument 0"));
  CHECK(raises([&] { exe->execute({in}, {out[0], out[0]}); }, "output 1 (float32(4,)) is output 0"));
  // run() hands out the compiled constant itself: callers may read it, never write it.
  std::vector<Array> ran = exe->run({in});
  CHECK(raises([&] { exe->execute({in}, {out[0], ran[1]}); }, "output 1 (float32(4,)) is read-only"));
  CHECK(static_cast<float*>(exe->run({in})[1].data())[0] == 2);
  Array huge;
  huge.shape = {3, (int64_t(1) << 62) + 1};
  CHECK(raises([&] { return huge.nbytes(); }, "[Array] float32(3, 4611686018427387905) is too large"));
  CHECK(raises([&] { Array::empty(huge.shape, DType::Float32); }, "is too large"));
}

}  // namespace

int main() {
  test_passes();
  test_random_graphs();
  test_while();
  test_while_body_frame();
  test_pack_loop_carries();
  test_counted_loop_recognition();
  test_threefry_bits();
  test_execute_checks_its_arguments_and_outputs();
  return check_report();
}
