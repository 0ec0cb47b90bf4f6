// The reference semantics of the elementwise ops: one element at a time through the scalar
// definitions (core/ops/scalar_ops.h), the same functions the CPU loops and the CUDA generator
// use. Integers and bool compute at their own type (exact). Floats compute in double: the
// functions instantiated at double make a higher-precision reference for the float32 and 16-bit
// kernels (float64 kernels compute the same functions). Ops that move bits or round once (neg,
// abs, copy, max, min, clamp, fma, rem, nextafter, select_n, convert, bitcast) run at the dtype's
// own type instead, where they are exact. FTZ/DAZ are emulated here (XJAX_SCALAR_SOFT_FTZ, and loads
// and stores that flush at the dtype's precision), not taken from the environment.
#define XJAX_SCALAR_SOFT_FTZ 1

#include "core/reference/scalar.h"

#include <cmath>
#include <type_traits>

#include "core/float_env.h"
#include "core/ops/scalar_convert.h"
#include "core/ops/scalar_ops.h"
#include "core/ops/scalar_special.h"
#include "core/ops/scalar_xla_math.h"

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

// The type the reference computes a dtype's values in, and loads and stores in it: floats read
// as flushed (DAZ) doubles and are stored with one rounding, flushed (FTZ).
template <class S> using Ref = std::conditional_t<scalar::is_float_v<scalar::compute_t<S>>, double, S>;

template <class S>
Ref<S> load(const Array& a, int64_t i) {
  S s = static_cast<const S*>(a.data())[i];
  if constexpr (std::is_same_v<Ref<S>, double>) return scalar::flush_subnormal(scalar::convert<S, double>(s));
  else return s;
}
template <class S>
void store(Array& a, int64_t i, Ref<S> v) {
  if constexpr (std::is_same_v<Ref<S>, double>) v = scalar::flush_subnormal(v);
  static_cast<S*>(a.data())[i] = scalar::convert<Ref<S>, S>(v);
}
// At the dtype's own compute type, unflushed (the soft-FTZ functions flush where they must).
template <class S> scalar::compute_t<S> load_own(const Array& a, int64_t i) {
  return scalar::to_compute(static_cast<const S*>(a.data())[i]);
}
template <class S> void store_own(Array& a, int64_t i, scalar::compute_t<S> v) {
  static_cast<S*>(a.data())[i] = scalar::to_storage<S>(v);
}

bool at_own_type(OpId op) {
  switch (op) {
    case OpId::neg_: case OpId::abs_: case OpId::copy_: case OpId::max_: case OpId::min_: case OpId::clamp_:
    case OpId::fma_: case OpId::rem_:
      return true;
    default: return false;
  }
}

bool is_comparison(OpId op) {
  return op == OpId::eq_ || op == OpId::ne_ || op == OpId::lt_ || op == OpId::le_ || op == OpId::gt_ ||
         op == OpId::ge_;
}

// The value of op on R values x[0..arity), into r; false when the op does not take R.
template <class R>
bool unary(OpId op, R x, const Attrs& attrs, R& r) {
  switch (op) {
#define XJAX_REF_CASE(name, domain)                                                   \
  case OpId::name##_:                                                                 \
    if constexpr (scalar::in_domain<scalar::Domain::domain, R>) return r = scalar::name(x), true; \
    return false;
    XJAX_SCALAR_UNARY_OPS(XJAX_REF_CASE)
    XJAX_SCALAR_SPECIAL_UNARY_OPS(XJAX_REF_CASE)
#undef XJAX_REF_CASE
    case OpId::integer_pow_:
      if constexpr (!scalar::is_bool_v<R>) return r = scalar::integer_pow(x, attrs.get_int("y")), true;
      return false;
    case OpId::round_:
      if constexpr (scalar::is_float_v<R>) return r = scalar::round(x, int(attrs.get_int_or("rounding_method", 0))), true;
      return false;
    default: return false;
  }
}

template <class R>
bool binary(OpId op, R a, R b, R& r) {
  switch (op) {
#define XJAX_REF_CASE(name, domain)                                                      \
  case OpId::name##_:                                                                    \
    if constexpr (scalar::in_domain<scalar::Domain::domain, R>) return r = scalar::name(a, b), true; \
    return false;
    XJAX_SCALAR_BINARY_OPS(XJAX_REF_CASE)
    XJAX_SCALAR_SPECIAL_BINARY_OPS(XJAX_REF_CASE)
#undef XJAX_REF_CASE
    default: return false;
  }
}

template <class R>
bool ternary(OpId op, R a, R b, R c, R& r) {
  switch (op) {
#define XJAX_REF_CASE(name, domain)                                                         \
  case OpId::name##_:                                                                       \
    if constexpr (scalar::in_domain<scalar::Domain::domain, R>) return r = scalar::name(a, b, c), true; \
    return false;
    XJAX_SCALAR_TERNARY_OPS(XJAX_REF_CASE)
    XJAX_SCALAR_SPECIAL_TERNARY_OPS(XJAX_REF_CASE)
#undef XJAX_REF_CASE
    default: return false;
  }
}

template <class R>
bool predicate(OpId op, const R* x, bool& r) {
  switch (op) {
#define XJAX_REF_CASE(name, domain) \
  case OpId::name##_: return r = scalar::name(x[0], x[1]), true;
    XJAX_SCALAR_COMPARE_OPS(XJAX_REF_CASE)
#undef XJAX_REF_CASE
    case OpId::is_finite_:
      if constexpr (scalar::is_float_v<R>) return r = scalar::is_finite(x[0]), true;
      return false;
    default: return false;
  }
}

// One element of a plain op on operands of storage type S (0-d operands broadcast).
template <class S, bool kOwn>
bool element(const Node& n, const std::vector<Array>& in, Array& out, int64_t i) {
  using R = std::conditional_t<kOwn, scalar::compute_t<S>, Ref<S>>;
  R x[3] = {};
  for (size_t k = 0; k < in.size() && k < 3; ++k) {
    int64_t j = in[k].size() == 1 ? 0 : i;
    if constexpr (kOwn) x[k] = load_own<S>(in[k], j);
    else x[k] = load<S>(in[k], j);
  }
  if (out.dtype == DType::Bool && (is_comparison(n.op) || n.op == OpId::is_finite_)) {
    bool r = false;
    if (!predicate(n.op, x, r)) return false;
    static_cast<bool*>(out.data())[i] = r;
    return true;
  }
  R r{};
  bool ok = in.size() == 1 ? unary(n.op, x[0], n.attrs, r)
            : in.size() == 2 ? binary(n.op, x[0], x[1], r)
            : in.size() == 3 && ternary(n.op, x[0], x[1], x[2], r);
  if (!ok) return false;
  if constexpr (kOwn) store_own<S>(out, i, r);
  else store<S>(out, i, r);
  return true;
}

// The ops of other forms: false when op is none of them.
bool special_form(const Node& n, const std::vector<Array>& in, Array& out, int64_t i) {
  auto at = [&](size_t k) { return in[k].size() == 1 ? 0 : i; };
  switch (n.op) {
    case OpId::convert_element_type_:
    case OpId::bitcast_convert_type_:
      dispatch_dtype(in[0].dtype, [&](auto from) {
        using From = decltype(from);
        dispatch_dtype(out.dtype, [&](auto to) {
          using To = decltype(to);
          From x = static_cast<const From*>(in[0].data())[i];
          if (n.op == OpId::convert_element_type_) {
            static_cast<To*>(out.data())[i] = scalar::convert<From, To>(x);
          } else if constexpr (sizeof(From) == sizeof(To) && std::is_same_v<From, bool> == std::is_same_v<To, bool>) {
            static_cast<To*>(out.data())[i] = scalar::bitcast<From, To>(x);
          }
        });
      });
      return true;
    case OpId::threefry2x32_: {
      auto word = [&](size_t k) { return static_cast<const uint32_t*>(in[k].data())[at(k)]; };
      static_cast<uint64_t*>(out.data())[i] = scalar::threefry2x32(word(0), word(1), word(2), word(3));
      return true;
    }
    case OpId::select_n_: {
      int k = scalar::select_case(get_i(in[0], at(0)), int(in.size()) - 1);
      size_t w = itemsize(out.dtype);
      std::memcpy(static_cast<char*>(out.data()) + i * w, static_cast<const char*>(in[1 + k].data()) + at(1 + k) * w, w);
      return true;
    }
    case OpId::nextafter_:  // steps in the operand's own format
      return dispatch_dtype(out.dtype, [&](auto tag) {
        using S = decltype(tag);
        if constexpr (scalar::is_half_v<S> || scalar::is_float_v<S>) {
          const S* a = static_cast<const S*>(in[0].data());
          const S* b = static_cast<const S*>(in[1].data());
          static_cast<S*>(out.data())[i] = scalar::nextafter(a[at(0)], b[at(1)]);
          return true;
        }
        return false;
      });
    default: return false;
  }
}

}  // namespace

bool elementwise(const Node& n, const std::vector<Array>& in, Array& out) {
  const int64_t count = out.size();
  if (count == 0) {  // still say whether the op is covered
    Array probe = Array::empty({}, out.dtype);
    std::vector<Array> args;
    for (const Array& a : in) args.push_back(Array::empty({}, a.dtype));
    for (Array& a : args) std::memset(a.data(), 0, itemsize(a.dtype));
    return elementwise(n, args, probe);
  }
  if (in.empty()) return false;
  bool float8 = is_float8(out.dtype);
  for (const Array& a : in) float8 = float8 || is_float8(a.dtype);
  if (float8 && n.op == OpId::convert_element_type_) {
    float8_convert(in[0], out);
    return true;
  }
  if (float8 && (n.op == OpId::bitcast_convert_type_ || n.op == OpId::copy_)) {  // the same bytes
    std::memcpy(out.data(), in[0].data(), out.nbytes());
    return true;
  }
  bool complex = is_complex(out.dtype);
  for (const Array& a : in) complex = complex || is_complex(a.dtype);
  if (complex && n.op != OpId::select_n_) return complex_elementwise(n, in, out);
  const bool own = at_own_type(n.op);
  for (int64_t i = 0; i < count; ++i) {
    if (special_form(n, in, out, i)) continue;
    bool ok = dispatch_dtype(in[0].dtype, [&](auto tag) {
      using S = decltype(tag);
      return own ? element<S, true>(n, in, out, i) : element<S, false>(n, in, out, i);
    });
    if (!ok) return false;
  }
  return true;
}

}  // namespace xjax::ref
