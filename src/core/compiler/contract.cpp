// The contraction pass: add(mul(a, b), c) -> fma(a, b, c), as LLVM contracts a jitted program's
// multiply-adds for XLA (fp-contract=fast), so that xjax's jitted programs round where JAX's do.
// LLVM's rules, which JAX's values confirm (tests/test_contract_jax_bits.py):
//   a*b + c, c + a*b -> fma(a, b, c);  a*b - c -> fma(a, b, -c);  c - a*b -> fma(-a, b, c);
//   -(a*b) + c -> fma(-a, b, c);  -(a*b) - c -> fma(-a, b, -c);  c - -(a*b) -> fma(a, b, c);
// only where the multiply (and a negation between) is read by nothing else, and with two candidate
// multiplies, the first operand's. Negations are exact, so each rewrite rounds once where the
// multiply and the add rounded twice. The multiplies XLA makes of other ops count too: square(x)
// and pow(x, 2.0) are x * x, and integer_pow(x, y) is JAX's repeated squaring, whose last multiply
// is x^(y - 2^k) * x^(2^k) (2^k the highest power of two in y; x^(y/2) squared for a power of two).
#include "core/compiler/constant.h"
#include "core/compiler/passes.h"

namespace xjax {

namespace {

bool contractible(const TypeInfo& t) { return t.dtype == DType::Float32 || t.dtype == DType::Float64; }

// The exponent of an integer_pow node.
int64_t exponent(const Node& n) { return n.attrs.get_int("y"); }

// Whether node n is a multiply as XLA's program has it (see above).
bool is_product(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpId::mul_:
    case OpId::square_:
      return true;
    case OpId::integer_pow_:
      return exponent(n) >= 2;
    case OpId::pow_: {
      const Node& e = g.nodes()[n.inputs[1].node];
      return e.op == OpId::constant_ && constant_all_equal(e, 2.0);
    }
    default:
      return false;
  }
}

// The two factors of product node n, built in dst from its remapped operand x (integer_pow's
// pieces as integer_pow nodes of their own).
std::pair<ValueRef, ValueRef> factors(const Node& n, const Rewriter& r, Graph& dst) {
  const ValueRef x = r.get(n.inputs[0]);
  auto power = [&](int64_t y) {
    if (y == 1) return x;
    Attrs a;
    a.set("y", y);
    return dst.add(OpId::integer_pow_, {x}, a)[0];
  };
  switch (n.op) {
    case OpId::mul_:
      return {x, r.get(n.inputs[1])};
    case OpId::integer_pow_: {
      const int64_t y = exponent(n);
      int64_t high = 1;
      while (high * 2 <= y) high *= 2;
      if (y == high) return {power(y / 2), power(y / 2)};
      return {power(y - high), power(high)};
    }
    default:  // square, pow(x, 2.0)
      return {x, x};
  }
}

// A multiply that an add or subtract may absorb: its operands, and whether it is read negated.
struct Product {
  int mul = -1, neg = -1;  // source nodes (neg: -1 when read directly)
  bool found() const { return mul >= 0; }
};

// The product that operand v of a float add/sub is, if any: a multiply, or the negation of one,
// read only there.
Product product_at(const Graph& g, const std::vector<int>& uses, ValueRef v) {
  Product p;
  const Node* n = &g.nodes()[v.node];
  if (n->op == OpId::neg_ && uses[v.node] == 1) {
    p.neg = v.node;
    v = n->inputs[0];
    n = &g.nodes()[v.node];
  }
  if (uses[v.node] != 1 || !contractible(n->outputs[0]) || !is_product(g, *n)) return {};
  p.mul = v.node;
  return p;
}

// Per add/sub node: which operand (0 or 1) is contracted and its product.
struct Plan {
  std::vector<int> operand;  // -1: none
  std::vector<Product> product;
  std::vector<bool> absorbed;  // multiplies and negations folded into an fma: not copied
};

Plan plan(const Graph& g) {
  const std::vector<int> uses = use_counts(g);
  const size_t n = g.nodes().size();
  Plan p{std::vector<int>(n, -1), std::vector<Product>(n), std::vector<bool>(n, false)};
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes()[i];
    if ((node.op != OpId::add_ && node.op != OpId::sub_) || !contractible(node.outputs[0])) continue;
    for (int k = 0; k < 2; ++k) {  // the first operand's product first, as LLVM
      Product pr = product_at(g, uses, node.inputs[k]);
      if (!pr.found() || g.type(node.inputs[1 - k]).dtype != node.outputs[0].dtype) continue;
      p.operand[i] = k;
      p.product[i] = pr;
      p.absorbed[size_t(pr.mul)] = true;
      if (pr.neg >= 0) p.absorbed[size_t(pr.neg)] = true;
      break;
    }
  }
  return p;
}

}  // namespace

Graph contract_multiply_adds(const Graph& g) {
  const Plan p = plan(g);
  Rewriter r(g);
  Graph& dst = r.dst();
  auto neg = [&](ValueRef v) { return dst.add(OpId::neg_, {v}, {})[0]; };
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const int k = p.operand[i];
    if (p.absorbed[i]) continue;  // (read only by the fma that replaces its reader)
    if (k < 0) {
      r.copy(int(i));
      continue;
    }
    const Node& node = g.nodes()[i];
    auto [a, b] = factors(g.nodes()[size_t(p.product[i].mul)], r, dst);
    ValueRef c = r.get(node.inputs[1 - k]);
    // The product's sign in the sum, and the other operand's.
    bool negate_product = p.product[i].neg >= 0;
    bool negate_c = false;
    if (node.op == OpId::sub_) {
      if (k == 0) negate_c = true;            // P - c
      else negate_product = !negate_product;  // c - P
    }
    if (negate_product) a = neg(a);
    if (negate_c) c = neg(c);
    r.replace(int(i), dst.add(OpId::fma_, {a, b, c}, {}));
  }
  return r.finish();
}

}  // namespace xjax
