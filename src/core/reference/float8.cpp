// The reference semantics of convert_element_type to and from float8 (the only computing op that
// sees float8 values: the compiler widens the others to float32 first), element by element through
// core/ops/scalar_float8.h, the definition the CPU loops use.
#include <complex>

#include "core/ops/float8_ops.h"
#include "core/ops/scalar_convert.h"
#include "core/reference/scalar.h"

namespace xjax::ref {

namespace {

double real_value(const Array& a, int64_t i) {  // complex: the real part, as converting to real takes
  if (!is_complex(a.dtype)) return get_f(a, i);
  return dispatch_complex(a.dtype, [&](auto tag) {
    using C = decltype(tag);
    return double(static_cast<const C*>(a.data())[i].real());
  });
}

void store_float(Array& out, int64_t i, float v) {  // an exact float8 value into any other dtype
  if (is_complex(out.dtype)) {
    dispatch_complex(out.dtype, [&](auto tag) {
      using C = decltype(tag);
      static_cast<C*>(out.data())[i] = C(typename C::value_type(v), 0);
    });
    return;
  }
  dispatch_dtype(out.dtype, [&](auto tag) {
    using To = decltype(tag);
    static_cast<To*>(out.data())[i] = scalar::convert<float, To>(v);
  });
}

}  // namespace

void float8_convert(const Array& in, Array& out) {
  const auto* from = static_cast<const uint8_t*>(in.data());
  auto* to = static_cast<uint8_t*>(out.data());
  for (int64_t i = 0; i < out.size(); ++i) {
    if (!is_float8(in.dtype)) {
      to[i] = float8_from_double(real_value(in, i), out.dtype);
      continue;
    }
    float v = float8_to_float(from[i], in.dtype);
    if (is_float8(out.dtype)) to[i] = float8_from_double(v, out.dtype);
    else store_float(out, i, v);
  }
}

}  // namespace xjax::ref
