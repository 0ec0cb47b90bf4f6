// float8_e4m3fn and float8_e5m2 in the core: the conversions' edge cases (every code, ties,
// overflow, NaN), the widen_float8 pass by node counts, and compiled programs against the
// reference interpreter and against float32 arithmetic rounded once. (tests/test_float8.py checks
// the conversions against ml_dtypes bit for bit.)
#include <cmath>
#include <cstdio>
#include <cstring>

#include "check.h"
#include "core/compiler/executable.h"
#include "core/compiler/passes.h"
#include "core/ops/float8_ops.h"
#include "core/reference/interpreter.h"
#include "graph_builders.h"

using namespace xjax;
using test::op;

namespace {

int count(const Graph& g, OpId id) {
  int c = 0;
  for (const Node& n : g.nodes()) c += n.op == id;
  return c;
}

void test_codes() {
  for (DType dt : {DType::Float8E4M3FN, DType::Float8E5M2}) {
    int nans = 0;
    for (int c = 0; c < 256; ++c) {
      float v = float8_to_float(uint8_t(c), dt);
      if (std::isnan(v)) {
        ++nans;
        CHECK(float8_from_double(v, dt) == ((c & 0x80) | float8_format(dt).nan));
        continue;
      }
      CHECK(float8_from_double(v, dt) == c);  // every value is exact and converts back
    }
    CHECK(nans == (dt == DType::Float8E4M3FN ? 2 : 6));
  }
  const DType e4 = DType::Float8E4M3FN, e5 = DType::Float8E5M2;
  CHECK(float8_to_float(0x7e, e4) == 448.0f);
  CHECK(float8_to_float(0x01, e4) == std::ldexp(1.0f, -9));
  CHECK(float8_to_float(0x7b, e5) == 57344.0f);
  CHECK(std::isinf(float8_to_float(0x7c, e5)));
  CHECK(float8_from_double(464, e4) == 0x7e);   // a tie to the even 448
  CHECK(float8_from_double(480, e4) == 0x7f);   // past 448: NaN (no infinities)
  CHECK(float8_from_double(-INFINITY, e4) == 0xff);
  CHECK(float8_from_double(61440, e5) == 0x7c);  // a tie between 57344 and 2^16: infinity
  CHECK(float8_from_double(3.25, e5) == float8_from_double(3.0, e5));
  CHECK(float8_from_double(std::ldexp(1.0, -10), e4) == 0x00);  // half the smallest subnormal: even 0
  CHECK(float8_from_double(std::ldexp(3.0, -10), e4) == 0x02);  // 1.5 subnormals: even 2
  CHECK(float8_from_double(std::ldexp(3.0, -11), e4) == 0x01);  // 0.75 of one: 1
  CHECK(float8_from_double(-0.0, e5) == 0x80);
  CHECK(float8_from_double(std::nan(""), e5) == 0x7e);
}

// The float32 conversion (the loops' fast path) against the double one, over a sweep of float32's
// bit patterns (every 61st, all signs and exponents) and the neighbours of every tie.
void test_float_path() {
  for (const scalar::Float8Format* f : {&scalar::kE4M3FN, &scalar::kE5M2}) {
    bool ok = true;
    for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 61) {
      float x;
      uint32_t b = uint32_t(u);
      std::memcpy(&x, &b, 4);
      ok = ok && scalar::float8_bits(x, *f) == scalar::float8_bits(double(x), *f);
    }
    for (int c = 0; c < 127; ++c) {
      float mid = 0.5f * (scalar::float8_value(uint8_t(c), *f) + scalar::float8_value(uint8_t(c + 1), *f));
      for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), -mid})
        ok = ok && scalar::float8_bits(x, *f) == scalar::float8_bits(double(x), *f);
    }
    CHECK(ok);
  }
}

Attrs to(DType dt) {
  Attrs a;
  a.set("new_dtype", std::string(dtype_name(dt)));
  return a;
}

// x * y + x over float8 operands: each op widened (converts up, float32 op, convert back).
Graph mul_add(DType dt, int64_t n) {
  Graph g;
  ValueRef x = g.parameter({{n}, dt}), y = g.parameter({{n}, dt});
  g.set_outputs({op(g, OpId::add_, {op(g, OpId::mul_, {x, y}), x})});
  return g;
}

void test_widen_pass() {
  Graph g = mul_add(DType::Float8E4M3FN, 5);
  Graph w = widen_float8(g);
  verify(w);
  CHECK(count(w, OpId::convert_element_type_) == 6);  // 2 + 1 per op's operands, 1 per result
  for (const Node& n : w.nodes())
    if (!accepts_float8(n.op))
      for (ValueRef v : n.inputs) CHECK(!is_float8(w.type(v).dtype));
  CHECK(w.type(w.outputs()[0]).dtype == DType::Float8E4M3FN);
  // Moving bytes is not widened.
  Graph t;
  ValueRef p = t.parameter({{2, 3}, DType::Float8E5M2});
  Attrs perm;
  perm.set("permutation", std::vector<int64_t>{1, 0});
  t.set_outputs({op(t, OpId::transpose_, {p}, perm)});
  CHECK(count(widen_float8(t), OpId::convert_element_type_) == 0);
}

void test_programs() {
  for (DType dt : {DType::Float8E4M3FN, DType::Float8E5M2}) {
    const int64_t n = 256;
    Array x = Array::empty({n}, dt), y = Array::empty({n}, dt);
    for (int64_t i = 0; i < n; ++i) {
      static_cast<uint8_t*>(x.data())[i] = uint8_t(i);
      static_cast<uint8_t*>(y.data())[i] = uint8_t((i * 37 + 11) & 0xff);
    }
    Graph g = mul_add(dt, n);
    std::vector<Array> got = compile(g)->run({x, y});
    got[0].wait();
    std::vector<Array> want = reference_run(widen_float8(g), {x, y});
    CHECK(std::memcmp(got[0].data(), want[0].data(), size_t(n)) == 0);
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) {
      float a = float8_to_float(uint8_t(i), dt), b = float8_to_float(uint8_t((i * 37 + 11) & 0xff), dt);
      float prod = float8_to_float(float8_from_double(a * b, dt), dt);
      uint8_t expect = float8_from_double(double(prod + a), dt);
      ok = ok && static_cast<const uint8_t*>(got[0].data())[i] == expect;
    }
    CHECK(ok);
    // A float8 -> float8 conversion of the other format, and float8 -> float32.
    Graph c;
    ValueRef p = c.parameter({{n}, dt});
    DType other = dt == DType::Float8E4M3FN ? DType::Float8E5M2 : DType::Float8E4M3FN;
    c.set_outputs({op(c, OpId::convert_element_type_, {p}, to(other)), op(c, OpId::convert_element_type_, {p}, to(DType::Float32))});
    std::vector<Array> conv = compile(c)->run({x});
    conv[1].wait();
    std::vector<Array> ref = reference_run(c, {x});
    CHECK(std::memcmp(conv[0].data(), ref[0].data(), size_t(n)) == 0);
    CHECK(std::memcmp(conv[1].data(), ref[1].data(), size_t(n) * 4) == 0);
  }
}

}  // namespace

int main() {
  test_codes();
  test_float_path();
  test_widen_pass();
  test_programs();
  return check_report();
}
