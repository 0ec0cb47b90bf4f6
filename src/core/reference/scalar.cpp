// The reference semantics of the elementwise ops: one element at a time, floats in double,
// integers in 64 bits wrapped to their width, bool as 0/1.
#include <cmath>
#include <limits>

#include "core/reference/scalar.h"

#include "core/float_env.h"
#include "core/ops/threefry.h"

namespace xjax::ref {

double get_f(const Array& a, int64_t i) {
  return dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    C v = C(static_cast<const T*>(a.data())[i]);
    if constexpr (std::is_floating_point_v<C>) v = flush_subnormal(v);  // as the kernels read it
    return double(v);
  });
}

int64_t get_i(const Array& a, int64_t i) {
  return dispatch_dtype(a.dtype, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    if constexpr (std::is_floating_point_v<C>) return int64_t(C(static_cast<const T*>(a.data())[i]));
    else return int64_t(static_cast<const T*>(a.data())[i]);
  });
}

void set_f(Array& a, int64_t i, double v) {
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    if constexpr (std::is_floating_point_v<C>) static_cast<T*>(a.data())[i] = T(flush_subnormal(C(v)));
    else static_cast<T*>(a.data())[i] = T(v != 0);
  });
}

void set_i(Array& a, int64_t i, int64_t v) {
  dispatch_dtype(a.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    if constexpr (std::is_same_v<T, bool>) static_cast<T*>(a.data())[i] = v != 0;
    else if constexpr (std::is_floating_point_v<C>) static_cast<T*>(a.data())[i] = T(C(v));
    else static_cast<T*>(a.data())[i] = T(uint64_t(v));  // wraps to the width
  });
}

namespace {

// float -> integer as JAX on CPU: NaN -> 0, saturating, truncating.
int64_t float_to_int(double x, DType to) {
  if (x != x) return 0;
  return dispatch_dtype(to, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      double lo = double(std::numeric_limits<T>::min()), hi = double(std::numeric_limits<T>::max());
      if (x <= lo) return int64_t(std::numeric_limits<T>::min());
      if (x >= hi) return int64_t(std::numeric_limits<T>::max());
      return int64_t(T(x));
    }
    return 0;
  });
}

// Float ops that move bits rather than compute (as the kernels do): a subnormal operand passes
// through unflushed, as in JAX. Decisions compare the (flushed) values; the result is an operand.
void copy_element(Array& out, int64_t i, const Array& src, int64_t j) {
  size_t w = itemsize(out.dtype);
  std::memcpy(static_cast<char*>(out.data()) + i * w, static_cast<const char*>(src.data()) + j * w, w);
}

bool float_move(OpId op, const std::vector<Array>& in, Array& out, int64_t i, int64_t j0, int64_t j1, int64_t j2) {
  auto nan = [](double v) { return v != v; };
  switch (op) {
    case OpId::copy_: copy_element(out, i, in[0], j0); return true;
    case OpId::neg_: case OpId::abs_: {
      copy_element(out, i, in[0], j0);
      unsigned char* top = static_cast<unsigned char*>(out.data()) + (i + 1) * itemsize(out.dtype) - 1;  // little-endian
      *top = op == OpId::neg_ ? *top ^ 0x80 : *top & 0x7f;
      return true;
    }
    case OpId::max_: case OpId::min_: {  // NaN from either side wins
      double a = get_f(in[0], j0), b = get_f(in[1], j1);
      bool take_b = !nan(a) && ((op == OpId::max_ ? b > a : b < a) || nan(b));
      copy_element(out, i, in[take_b], take_b ? j1 : j0);
      return true;
    }
    case OpId::clamp_: {  // min(max(x, lo), hi), NaN from any operand
      double lo = get_f(in[0], j0), x = get_f(in[1], j1), hi = get_f(in[2], j2);
      int k = nan(x) ? 1 : (lo > x || nan(lo) ? 0 : 1);
      double m = k == 0 ? lo : x;
      if (!nan(m) && (hi < m || nan(hi))) k = 2;
      copy_element(out, i, in[k], k == 0 ? j0 : (k == 1 ? j1 : j2));
      return true;
    }
    default: return false;
  }
}

// Float -> bool tests the bits (but the sign): a bfloat16 subnormal is true, as in JAX, where
// arithmetic would read it as 0.
bool nonzero_float(const Array& a, int64_t i) {
  if (itemsize(a.dtype) == 2) return (static_cast<const uint16_t*>(a.data())[i] & 0x7fffu) != 0;
  return get_f(a, i) != 0;  // NaN: true
}

bool less(DType dt, int64_t a, int64_t b) { return dt == DType::UInt64 ? uint64_t(a) < uint64_t(b) : a < b; }

double float_unary(OpId op, double x, const Attrs& attrs, bool& ok) {
  switch (op) {
    case OpId::sign_: return x > 0 ? 1.0 : (x < 0 ? -1.0 : x * 0.0);
    case OpId::floor_: return std::floor(x);
    case OpId::ceil_: return std::ceil(x);
    case OpId::round_: return attrs.get_int_or("rounding_method", 0) == 0 ? std::round(x) : std::nearbyint(x);
    case OpId::exp_: return std::exp(x);
    case OpId::exp2_: return std::exp2(x);
    case OpId::log_: return std::log(x);
    case OpId::log1p_: return std::log1p(x);
    case OpId::expm1_: return std::expm1(x);
    case OpId::tanh_: return std::tanh(x);
    case OpId::logistic_: return 1.0 / (1.0 + std::exp(-x));
    case OpId::sin_: return std::sin(x);
    case OpId::cos_: return std::cos(x);
    case OpId::tan_: return std::tan(x);
    case OpId::asin_: return std::asin(x);
    case OpId::acos_: return std::acos(x);
    case OpId::atan_: return std::atan(x);
    case OpId::sinh_: return std::sinh(x);
    case OpId::cosh_: return std::cosh(x);
    case OpId::asinh_: return std::asinh(x);
    case OpId::acosh_: return std::acosh(x);
    case OpId::atanh_: return std::atanh(x);
    case OpId::sqrt_: return std::sqrt(x);
    case OpId::rsqrt_: return 1.0 / std::sqrt(x);
    case OpId::cbrt_: return std::cbrt(x);
    case OpId::square_: return x * x;
    case OpId::integer_pow_: {
      int64_t y = attrs.get_int("y");
      double r = 1;
      for (int64_t k = 0; k < (y < 0 ? -y : y); ++k) r *= x;
      return y < 0 ? 1.0 / r : r;
    }
    default: ok = false; return 0;
  }
}

int64_t int_unary(OpId op, int64_t x, DType dt, const Attrs& attrs, bool& ok) {
  bool uns = is_unsigned(dt);
  switch (op) {
    case OpId::neg_: return int64_t(0 - uint64_t(x));
    case OpId::abs_: return uns || x >= 0 ? x : int64_t(0 - uint64_t(x));
    case OpId::sign_: return uns ? int64_t(x != 0) : (x > 0) - (x < 0);
    case OpId::square_: return int64_t(uint64_t(x) * uint64_t(x));
    case OpId::copy_: return x;
    case OpId::bitwise_not_: return dt == DType::Bool ? int64_t(!x) : ~x;
    case OpId::integer_pow_: {
      uint64_t r = 1;
      for (int64_t k = 0; k < attrs.get_int("y"); ++k) r *= uint64_t(x);
      return int64_t(r);
    }
    default: ok = false; return 0;
  }
}

double float_binary(OpId op, double a, double b, bool& ok) {
  switch (op) {
    case OpId::add_: return a + b;
    case OpId::sub_: return a - b;
    case OpId::mul_: return a * b;
    case OpId::div_: return a / b;
    case OpId::pow_: return std::pow(a, b);
    case OpId::atan2_: return std::atan2(a, b);
    default: ok = false; return 0;
  }
}

int64_t int_binary(OpId op, int64_t a, int64_t b, DType dt, bool& ok) {
  bool boolean = dt == DType::Bool;
  switch (op) {
    case OpId::add_: return boolean ? (a | b) : int64_t(uint64_t(a) + uint64_t(b));
    case OpId::sub_: return int64_t(uint64_t(a) - uint64_t(b));
    case OpId::mul_: return boolean ? (a & b) : int64_t(uint64_t(a) * uint64_t(b));
    case OpId::max_: return less(dt, a, b) ? b : a;
    case OpId::min_: return less(dt, b, a) ? b : a;
    case OpId::bitwise_and_: return a & b;
    case OpId::bitwise_or_: return a | b;
    case OpId::bitwise_xor_: return a ^ b;
    default: ok = false; return 0;
  }
}

int compare(OpId op, bool floating, DType dt, double fa, double fb, int64_t ia, int64_t ib, bool& ok) {
  bool lt = floating ? fa < fb : less(dt, ia, ib);
  bool gt = floating ? fa > fb : less(dt, ib, ia);
  bool eq = floating ? fa == fb : ia == ib;
  switch (op) {
    case OpId::eq_: return eq;
    case OpId::ne_: return !eq;
    case OpId::lt_: return lt;
    case OpId::le_: return lt || eq;
    case OpId::gt_: return gt;
    case OpId::ge_: return gt || eq;
    default: ok = false; return 0;
  }
}

}  // namespace

bool elementwise(const Node& n, const std::vector<Array>& in, Array& out) {
  const int64_t count = out.size();
  auto at = [&](size_t k, int64_t i) { return in[k].size() == 1 ? 0 : i; };  // 0-d operands broadcast
  const DType dt = in.empty() ? out.dtype : in[0].dtype;
  const bool fl = is_floating(dt);
  bool ok = true;
  for (int64_t i = 0; i < count && ok; ++i) {
    if (n.op == OpId::bitcast_convert_type_) {
      copy_element(out, i, in[0], i);
    } else if (n.op == OpId::fma_) {  // rounded once, in the operands' precision (16-bit: float32)
      double a = get_f(in[0], at(0, i)), b = get_f(in[1], at(1, i)), c = get_f(in[2], at(2, i));
      set_f(out, i, dt == DType::Float64 ? std::fma(a, b, c) : double(std::fmaf(float(a), float(b), float(c))));
    } else if (n.op == OpId::threefry2x32_) {
      auto word = [&](size_t k) { return uint32_t(get_i(in[k], at(k, i))); };
      set_i(out, i, int64_t(threefry2x32(word(0), word(1), word(2), word(3))));
    } else if (n.op == OpId::select_n_) {
      int64_t k = get_i(in[0], at(0, i));
      int64_t cases = int64_t(in.size()) - 1;
      k = k < 0 ? 0 : (k >= cases ? cases - 1 : k);
      copy_element(out, i, in[1 + k], at(1 + k, i));
    } else if (fl && float_move(n.op, in, out, i, at(0, i), in.size() > 1 ? at(1, i) : 0, in.size() > 2 ? at(2, i) : 0)) {
      continue;
    } else if (n.op == OpId::clamp_) {
      int64_t lo = get_i(in[0], at(0, i)), x = get_i(in[1], at(1, i)), hi = get_i(in[2], at(2, i));
      int64_t m = less(dt, lo, x) ? x : lo;
      set_i(out, i, less(dt, m, hi) ? m : hi);
    } else if (n.op == OpId::convert_element_type_) {
      if (in[0].dtype == out.dtype) copy_element(out, i, in[0], i);
      else if (is_floating(out.dtype)) set_f(out, i, fl ? get_f(in[0], i) : double(get_i(in[0], i)));
      else if (out.dtype == DType::Bool) set_i(out, i, fl ? nonzero_float(in[0], i) : get_i(in[0], i) != 0);
      else if (fl) set_i(out, i, float_to_int(get_f(in[0], i), out.dtype));
      else set_i(out, i, get_i(in[0], i));
    } else if (n.op == OpId::is_finite_) {
      set_i(out, i, std::isfinite(get_f(in[0], i)));
    } else if (in.size() == 2 && out.dtype == DType::Bool && n.op != OpId::bitwise_and_ && n.op != OpId::bitwise_or_ &&
               n.op != OpId::bitwise_xor_ && n.op != OpId::max_ && n.op != OpId::min_ && n.op != OpId::add_ &&
               n.op != OpId::mul_) {
      set_i(out, i, compare(n.op, fl, dt, fl ? get_f(in[0], at(0, i)) : 0, fl ? get_f(in[1], at(1, i)) : 0,
                            fl ? 0 : get_i(in[0], at(0, i)), fl ? 0 : get_i(in[1], at(1, i)), ok));
    } else if (in.size() == 1) {
      if (fl) set_f(out, i, float_unary(n.op, get_f(in[0], i), n.attrs, ok));
      else set_i(out, i, int_unary(n.op, get_i(in[0], i), dt, n.attrs, ok));
    } else if (in.size() == 2) {
      if (fl) set_f(out, i, float_binary(n.op, get_f(in[0], at(0, i)), get_f(in[1], at(1, i)), ok));
      else set_i(out, i, int_binary(n.op, get_i(in[0], at(0, i)), get_i(in[1], at(1, i)), dt, ok));
    } else {
      ok = false;
    }
  }
  if (count == 0) {  // still say whether the op is covered
    Array probe = Array::empty({}, out.dtype);
    std::vector<Array> args;
    for (const Array& a : in) args.push_back(Array::empty({}, a.dtype));
    for (Array& a : args) std::memset(a.data(), 0, itemsize(a.dtype));
    return elementwise(n, args, probe);
  }
  return ok;
}

}  // namespace xjax::ref
