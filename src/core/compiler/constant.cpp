// The constant op (values, attributes, shape rule) and the shape rules of the other ops the
// compiler owns (empty, control flow, callbacks, the barrier), registered when the library loads.
#include "core/compiler/constant.h"

#include <cstring>
#include <type_traits>

#include "core/ops/float8_ops.h"
#include "core/ops/op_attrs.h"
#include "core/size.h"

namespace xjax {

namespace {

// One element of dtype T from an int or float attribute (ints wrap as NumPy's astype does).
template <typename T>
T element_from(const AttrValue& v) {
  using C = typename ComputeOf<T>::type;
  if (auto* i = std::get_if<int64_t>(&v)) {
    if constexpr (std::is_same_v<T, bool>) return *i != 0;
    else if constexpr (std::is_integral_v<T>) return T(uint64_t(*i));
    else return T(C(*i));
  }
  double d = std::get<double>(v);
  if constexpr (std::is_same_v<T, bool>) return d != 0;
  else return T(C(d));
}

Shape shape_attr(const Attrs& a) { return a.has("shape") ? a.get_ints("shape") : Shape{}; }

std::vector<TypeInfo> infer_constant(const std::vector<TypeInfo>&, const Attrs& attrs) {
  const OpId op = OpId::constant_;
  const DType dt = dtype_attr(op, attrs, "dtype");
  const Shape shape = ints_attr_or(op, attrs, "shape", {});
  const int64_t want = checked_size(shape, dt, "constant").bytes;
  bool has_value = attrs.has("value"), has_data = attrs.has("data");
  if (has_value == has_data) fail_value(op, "needs exactly one of the attributes 'value' and 'data'");
  if (has_value) {
    number_attr(op, attrs, "value");
  } else {
    const size_t bytes = str_attr(op, attrs, "data").size();
    if (bytes != size_t(want))
      fail_value(op, "attribute 'data' has " + std::to_string(bytes) + " bytes, " + dtype_name(dt) + shape_str(shape) +
                         " needs " + std::to_string(want));
  }
  return {{shape, dt}};
}

std::vector<TypeInfo> infer_host_callback(const std::vector<TypeInfo>&, const Attrs& attrs) {
  int_attr(OpId::host_callback_, attrs, "callback_id");
  return {};
}

std::vector<TypeInfo> infer_empty(const std::vector<TypeInfo>&, const Attrs& attrs) {
  const OpId op = OpId::empty_;
  const DType dt = dtype_attr(op, attrs, "dtype");
  return {{ints_attr(op, attrs, "shape"), dt}};
}

std::vector<TypeInfo> infer_barrier(const std::vector<TypeInfo>& in, const Attrs&) { return in; }

template <OpId Op>
std::vector<TypeInfo> infer_control(const std::vector<TypeInfo>&, const Attrs&) {
  fail_value(Op, "takes subgraphs: add it with add_subgraph_op");
}


}  // namespace

void register_compiler_infer(OpTable& t) {
  t.set_infer(OpId::constant_, infer_constant);
  t.set_infer(OpId::host_callback_, infer_host_callback);
  t.set_infer(OpId::optimization_barrier_, infer_barrier);
  t.set_infer(OpId::empty_, infer_empty);
  t.set_infer(OpId::cond_, infer_control<OpId::cond_>);
  t.set_infer(OpId::while_, infer_control<OpId::while_>);
}

bool is_splat_constant(const Node& n) {
  return n.op == OpId::constant_ && (n.attrs.has("value") || numel(n.outputs[0].shape) == 1);
}

std::string splat_bytes(const Node& n) {
  DType dt = n.outputs[0].dtype;
  if (!n.attrs.has("value")) return n.attrs.get_str("data").substr(0, itemsize(dt));
  std::string out(itemsize(dt), '\0');
  if (is_float8(dt)) {  // the value rounded to the format, as converting it does
    const AttrValue& v = n.attrs.items().at("value");
    double x = std::holds_alternative<int64_t>(v) ? double(std::get<int64_t>(v)) : std::get<double>(v);
    out[0] = char(float8_from_double(x, dt));
    return out;
  }
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    T v = element_from<T>(n.attrs.items().at("value"));
    std::memcpy(&out[0], &v, sizeof(T));
  });
  return out;
}

void constant_fill(const Node& n, void* out) {
  int64_t count = numel(n.outputs[0].shape);
  if (n.attrs.has("data")) {
    const std::string& d = n.attrs.get_str("data");
    if (!d.empty()) std::memcpy(out, d.data(), d.size());
    return;
  }
  std::string e = splat_bytes(n);
  char* o = static_cast<char*>(out);
  for (int64_t i = 0; i < count; ++i) std::memcpy(o + i * e.size(), e.data(), e.size());
}

bool constant_all_equal(const Node& n, double v) {
  // (no complex or float8 simplifications yet)
  if (n.op != OpId::constant_ || is_complex(n.outputs[0].dtype) || is_float8(n.outputs[0].dtype)) return false;
  const TypeInfo& t = n.outputs[0];
  int64_t count = numel(t.shape);
  if (count > 4096) return false;
  Array a = constant_array(n);
  return dispatch_dtype(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    const T* p = static_cast<const T*>(a.data());
    for (int64_t i = 0; i < count; ++i)
      if (double(C(p[i])) != v) return false;
    return true;
  });
}

Array constant_array(const Node& n) {
  Array a = Array::empty(n.outputs[0].shape, n.outputs[0].dtype);
  constant_fill(n, a.data());
  return a;
}

Attrs constant_attrs_from(const void* data, const TypeInfo& type) {
  Attrs a;
  a.set("dtype", std::string(dtype_name(type.dtype)));
  a.set("shape", type.shape);
  a.set("data", std::string(static_cast<const char*>(data), size_t(numel(type.shape)) * itemsize(type.dtype)));
  return a;
}

Attrs splat_attrs(const std::string& element, const TypeInfo& type) {
  Attrs a;
  a.set("dtype", std::string(dtype_name(type.dtype)));
  a.set("shape", type.shape);
  if (is_float8(type.dtype)) {
    a.set("value", double(float8_to_float(uint8_t(element[0]), type.dtype)));
    return a;
  }
  dispatch_dtype(type.dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = typename ComputeOf<T>::type;
    T v;
    std::memcpy(&v, element.data(), sizeof(T));
    if constexpr (std::is_floating_point_v<C>) a.set("value", double(C(v)));
    else a.set("value", int64_t(v));
  });
  return a;
}

}  // namespace xjax
