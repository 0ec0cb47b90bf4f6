// The public C++ API (include/xjax/xjax.h): handles over the bridge (bridge.h), which alone sees
// the core. Conversion and messages only.
#include <cstring>

#include "api/bridge.h"
#include "xjax/xjax.h"

namespace xjax {
inline namespace v1 {

namespace {

Shape as_shape(const std::vector<int64_t>& s) { return s; }

TensorSpec spec(const xjax_detail::SpecData& s) { return {as_shape(s.shape), DType(s.dtype), s.weak}; }

Signature signature_of(const xjax_detail::SignatureData& d) {
  Signature s{d.name, {}, {}, d.in_tree, d.out_tree};
  for (const auto& i : d.inputs) s.inputs.push_back(spec(i));
  for (const auto& o : d.outputs) s.outputs.push_back(spec(o));
  return s;
}

xjax_detail::LoadOptions load_options(const Options& o) {
  return {o.num_threads, o.blas_library, o.verify_checksum, o.map_file, o.max_array_bytes};
}

}  // namespace

// ---- dtypes and arrays ----------------------------------------------------------------------

const char* dtype_name(DType dtype) { return xjax_detail::dtype_name(int(dtype)); }
size_t dtype_size(DType dtype) { return xjax_detail::dtype_size(int(dtype)); }
int64_t num_elements(const Shape& shape) { return xjax_detail::num_elements(shape); }

Array Array::copy(const void* data, size_t nbytes, Shape shape, DType dtype) {
  return Array(xjax_detail::value_copy(data, nbytes, shape, int(dtype)));
}

Array Array::borrow(const void* data, size_t nbytes, Shape shape, DType dtype) {
  return Array(xjax_detail::value_borrow(data, nbytes, shape, int(dtype)));
}

namespace {
const xjax_detail::Value& must(const std::shared_ptr<xjax_detail::Value>& v) {
  if (!v) throw ArgumentError("[xjax::Array] the array is empty (no value)");
  return *v;
}

template <typename State>
State& must(const std::shared_ptr<State>& s, const char* what) {
  if (!s) throw ArgumentError(std::string("[xjax] the ") + what + " is empty (default-constructed)");
  return *s;
}
}  // namespace

const Shape& Array::shape() const { return xjax_detail::value_shape(must(value_)); }
DType Array::dtype() const { return DType(xjax_detail::value_dtype(must(value_))); }
int64_t Array::size() const { return num_elements(shape()); }
size_t Array::nbytes() const { return xjax_detail::value_nbytes(must(value_)); }
const void* Array::data() const { return xjax_detail::value_data(must(value_)); }

void Array::copy_to(void* out, size_t nbytes) const {
  if (nbytes != this->nbytes())
    throw ArgumentError("[xjax::Array::copy_to] the array has " + std::to_string(this->nbytes()) +
                        " bytes, the destination " + std::to_string(nbytes));
  if (nbytes) std::memcpy(out, data(), nbytes);
}

void Array::check_dtype(DType want) const {
  if (dtype() != want)
    throw ArgumentError(std::string("[xjax::Array] the array is ") + dtype_name(dtype()) + ", not " + dtype_name(want));
}

void Array::throw_not_one_element() const {
  throw ArgumentError("[xjax::Array::item] the array has " + std::to_string(size()) + " elements, not one");
}

// ---- functions ------------------------------------------------------------------------------

std::vector<const xjax_detail::Value*> Function::values(const std::vector<Array>& args, const std::string& fn) {
  std::vector<const xjax_detail::Value*> v;
  v.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid()) throw ArgumentError("[" + fn + "] argument " + std::to_string(i) + " is an empty Array");
    v.push_back(args[i].value_.get());
  }
  return v;
}

const std::string& Function::name() const { return xjax_detail::function_name(must(state_, "Function")); }
const std::vector<Signature>& Function::signatures() const { return must(signatures_, "Function"); }
const Signature& Function::signature() const { return signatures().front(); }

std::vector<Array> Function::call(const std::vector<Array>& args) const {
  auto in = values(args, name());
  std::vector<Array> out;
  for (auto& v : xjax_detail::function_call(*state_, in)) out.push_back(Array(std::move(v)));
  return out;
}

Future Function::call_async(const std::vector<Array>& args) const {
  Future f;
  auto in = values(args, name());
  f.pending_ = xjax_detail::function_call_async(*state_, in);
  return f;
}

std::vector<Array> Future::wait() const {
  if (!pending_) throw ArgumentError("[xjax::Future::wait] the future holds no call");
  std::vector<Array> out;
  for (auto& v : xjax_detail::pending_wait(*pending_)) out.push_back(Array(std::move(v)));
  return out;
}

bool Future::ready() const { return pending_ && xjax_detail::pending_ready(*pending_); }

// ---- modules --------------------------------------------------------------------------------

std::vector<std::string> Module::function_names() const { return xjax_detail::module_names(must(state_, "Module")); }

bool Module::has_function(const std::string& name) const {
  must(state_, "Module");
  return xjax_detail::module_function(state_, name) != nullptr;
}

Function Module::function(const std::string& name) const {
  Function f;
  must(state_, "Module");
  f.state_ = xjax_detail::module_function(state_, name);
  if (!f.state_) {
    std::string names;
    for (const auto& n : function_names()) names += (names.empty() ? "'" : ", '") + n + "'";
    throw ArgumentError("[xjax::Module::function] no function '" + name + "'; the module has " + names);
  }
  auto sigs = std::make_shared<std::vector<Signature>>();
  for (const auto& d : xjax_detail::function_signatures(*f.state_)) sigs->push_back(signature_of(d));
  f.signatures_ = std::move(sigs);
  return f;
}

const std::string& Module::producer() const { return xjax_detail::module_producer(must(state_, "Module")); }
uint32_t Module::format_version() const { return xjax_detail::module_format_version(must(state_, "Module")); }
uint32_t Module::opset_version() const { return xjax_detail::module_opset_version(must(state_, "Module")); }

Module load(const std::string& path, const Options& options) {
  Module m;
  m.state_ = xjax_detail::module_load(path, load_options(options));
  return m;
}

Module load_from_memory(const void* data, size_t size, const Options& options) {
  Module m;
  m.state_ = xjax_detail::module_load_memory(data, size, load_options(options));
  return m;
}

const char* version() { return "0.1.0"; }
uint32_t supported_format_version() { return xjax_detail::format_version(); }
uint32_t supported_opset_version() { return xjax_detail::opset_version(); }

}  // namespace v1
}  // namespace xjax
