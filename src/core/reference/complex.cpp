// The reference semantics of the elementwise ops on complex numbers: one element at a time through
// core/ops/scalar_complex.h (the functions the CPU loops use), computed in complex<double> (a
// higher-precision reference for complex64) and stored with one rounding per part; parts are read
// as flushed (DAZ) and stored flushed (FTZ), as the real ops' reference does.
#include <cmath>

#include "core/float_env.h"
#include "core/ops/scalar_complex.h"
#include "core/ops/scalar_convert.h"
#include "core/reference/scalar.h"

namespace xjax::ref {

namespace {

using Z = std::complex<double>;
namespace cx = scalar::cx;

Z load_z(const Array& a, int64_t i) {
  return dispatch_complex(a.dtype, [&](auto tag) {
    using C = decltype(tag);
    const C v = static_cast<const C*>(a.data())[i];
    return Z(scalar::flush_subnormal(double(v.real())), scalar::flush_subnormal(double(v.imag())));
  });
}

void store_z(Array& a, int64_t i, Z z) {
  dispatch_complex(a.dtype, [&](auto tag) {
    using C = decltype(tag);
    using P = typename C::value_type;
    static_cast<C*>(a.data())[i] = C(scalar::flush_subnormal(P(z.real())), scalar::flush_subnormal(P(z.imag())));
  });
}

// convert_element_type with a complex operand or result (the same rules as the CPU loops).
void convert(const Array& in, Array& out, int64_t i) {
  if (is_complex(out.dtype) && is_complex(in.dtype)) return store_z(out, i, load_z(in, i));
  if (is_complex(out.dtype)) {  // a real value through the part's type
    dispatch_complex(out.dtype, [&](auto ctag) {
      using P = typename decltype(ctag)::value_type;
      dispatch_dtype(in.dtype, [&](auto tag) {
        using From = decltype(tag);
        store_z(out, i, Z(scalar::convert<From, P>(static_cast<const From*>(in.data())[i]), 0));
      });
    });
    return;
  }
  const Z z = load_z(in, i);
  if (out.dtype == DType::Bool) return set_i(out, i, z.real() != 0 || z.imag() != 0);
  dispatch_complex(in.dtype, [&](auto ctag) {  // the real part, from the part's own type
    using P = typename decltype(ctag)::value_type;
    dispatch_dtype(out.dtype, [&](auto tag) {
      using To = decltype(tag);
      static_cast<To*>(out.data())[i] = scalar::convert<P, To>(P(z.real()));
    });
  });
}

}  // namespace

bool complex_elementwise(const Node& n, const std::vector<Array>& in, Array& out) {
  auto at = [&](size_t k, int64_t i) { return in[k].size() == 1 ? 0 : i; };
  for (int64_t i = 0; i < out.size(); ++i) {
    switch (n.op) {
      case OpId::convert_element_type_: convert(in[0], out, i); continue;
      case OpId::complex_: store_z(out, i, Z(get_f(in[0], at(0, i)), get_f(in[1], at(1, i)))); continue;
      case OpId::real_: set_f(out, i, load_z(in[0], i).real()); continue;
      case OpId::imag_: set_f(out, i, load_z(in[0], i).imag()); continue;
      case OpId::abs_: set_f(out, i, cx::abs(load_z(in[0], i))); continue;
      case OpId::eq_: set_i(out, i, cx::eq(load_z(in[0], at(0, i)), load_z(in[1], at(1, i)))); continue;
      case OpId::ne_: set_i(out, i, cx::ne(load_z(in[0], at(0, i)), load_z(in[1], at(1, i)))); continue;
      default: break;
    }
    Z r;
    if (in.size() == 1) {
      const Z x = load_z(in[0], i);
      switch (n.op) {
        case OpId::neg_: r = cx::neg(x); break;
        case OpId::conj_: r = cx::conj(x); break;
        case OpId::sign_: r = cx::sign(x); break;
        case OpId::square_: r = cx::square(x); break;
        case OpId::integer_pow_: r = cx::integer_pow(x, n.attrs.get_int("y")); break;
        case OpId::exp_: r = cx::exp(x); break;
        case OpId::log_: r = cx::log(x); break;
        case OpId::sqrt_: r = cx::sqrt(x); break;
        case OpId::rsqrt_: r = cx::rsqrt(x); break;
        case OpId::expm1_: r = cx::expm1(x); break;
        case OpId::log1p_: r = cx::log1p(x); break;
        case OpId::exp2_: r = cx::exp2(x); break;
        case OpId::logistic_: r = cx::logistic(x); break;
        case OpId::sin_: r = cx::sin(x); break;
        case OpId::cos_: r = cx::cos(x); break;
        case OpId::tan_: r = cx::tan(x); break;
        case OpId::sinh_: r = cx::sinh(x); break;
        case OpId::cosh_: r = cx::cosh(x); break;
        case OpId::tanh_: r = cx::tanh(x); break;
        case OpId::asin_: r = cx::asin(x); break;
        case OpId::acos_: r = cx::acos(x); break;
        case OpId::atan_: r = cx::atan(x); break;
        case OpId::asinh_: r = cx::asinh(x); break;
        case OpId::acosh_: r = cx::acosh(x); break;
        case OpId::atanh_: r = cx::atanh(x); break;
        case OpId::copy_: r = x; break;
        default: return false;
      }
    } else if (in.size() == 2) {
      const Z x = load_z(in[0], at(0, i)), y = load_z(in[1], at(1, i));
      switch (n.op) {
        case OpId::add_: r = cx::add(x, y); break;
        case OpId::sub_: r = cx::sub(x, y); break;
        case OpId::mul_: r = cx::mul(x, y); break;
        case OpId::div_: r = cx::div(x, y); break;
        case OpId::pow_: r = cx::pow(x, y); break;
        case OpId::atan2_: r = cx::atan2(x, y); break;
        case OpId::max_: r = cx::max(x, y); break;
        case OpId::min_: r = cx::min(x, y); break;
        default: return false;
      }
    } else if (n.op == OpId::clamp_) {
      r = cx::clamp(load_z(in[0], at(0, i)), load_z(in[1], at(1, i)), load_z(in[2], at(2, i)));
    } else {
      return false;
    }
    store_z(out, i, r);
  }
  return true;
}

}  // namespace xjax::ref
