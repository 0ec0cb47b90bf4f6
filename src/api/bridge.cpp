// The core's side of the public C++ API: values are core Arrays, modules are read ModuleDefs with
// their compiled functions, a thread pool (Options::num_threads) and an executor for call_async.
#include "api/bridge.h"

#include <cstring>
#include <future>
#include <map>
#include <mutex>

#include "core/cpu/blas.h"
#include "core/export/format.h"
#include "core/export/loaded.h"
#include "core/size.h"
#include "core/stream.h"
#include "core/thread_pool.h"
#include "xjax/errors.h"

namespace xjax_detail {

using xjax::ArgumentError;
using CoreArray = xjax::Array;
using xjax::LoadedFunction;

static_assert(int(xjax::DType::Bool) == 0 && int(xjax::DType::BFloat16) == 10 && int(xjax::DType::Float64) == 12 && int(xjax::DType::Complex128) == 14 &&
                  int(xjax::DType::Float8E5M2) == 16 && xjax::kNumDTypes == 17,
              "the public DType enum (include/xjax/xjax.h) lists the core's dtypes in the core's order");

struct Value {
  CoreArray a;
};

struct ModuleState {
  xjax::ModuleDef def;
  std::map<std::string, std::shared_ptr<FunctionState>> functions;
  std::vector<std::string> names;  // in file order
  std::shared_ptr<xjax::ThreadPool> pool;  // null: the process-wide pool
  std::once_flag stream_once;
  std::unique_ptr<xjax::Stream> stream;  // call_async's executor, made on first use; drained on destruction
};

struct FunctionState {
  std::string name;
  std::vector<std::shared_ptr<LoadedFunction>> overloads;
  std::vector<SignatureData> signatures;
  std::shared_ptr<xjax::ThreadPool> pool;
  ModuleState* module;  // valid: the public Function holds the module too (see module_function)
  std::shared_ptr<ModuleState> keep;
};

struct Pending {
  std::shared_future<std::vector<CoreArray>> results;
};

namespace {

xjax::DType core_dtype(int dtype) {
  if (dtype < 0 || dtype >= xjax::kNumDTypes) throw ArgumentError("[xjax] unknown dtype " + std::to_string(dtype));
  return xjax::DType(dtype);
}

xjax::Shape checked_shape(const std::vector<int64_t>& shape, int dtype, size_t nbytes, const char* api) {
  const xjax::DType dt = core_dtype(dtype);
  int64_t want;
  try {
    want = xjax::checked_size(shape, dt, api).bytes;
  } catch (const std::invalid_argument& e) {
    throw ArgumentError(e.what());
  }
  if (uint64_t(want) != nbytes)
    throw ArgumentError(std::string("[") + api + "] " + xjax::dtype_name(dt) + xjax::shape_str(shape) + " needs " +
                        std::to_string(want) + " bytes, the memory given has " + std::to_string(nbytes));
  return shape;
}

SpecData spec_data(const xjax::ArgSpec& s) { return {s.type.shape, int(s.type.dtype), s.weak}; }

std::string specs_str(const std::vector<SpecData>& specs) {
  std::string out = "(";
  for (size_t i = 0; i < specs.size(); ++i)
    out += (i ? ", " : "") + std::string(xjax::dtype_name(xjax::DType(specs[i].dtype))) + xjax::shape_str(specs[i].shape);
  return out + ")";
}

std::shared_ptr<ModuleState> make_module(xjax::ModuleDef def, const LoadOptions& o) {
  auto m = std::make_shared<ModuleState>();
  if (o.num_threads < 0) throw ArgumentError("[xjax::load] num_threads must be >= 0, got " + std::to_string(o.num_threads));
  if (o.num_threads > 0) m->pool = std::make_shared<xjax::ThreadPool>(o.num_threads);
  std::vector<std::shared_ptr<LoadedFunction>> compiled = xjax::compile_module(def, o.max_array_bytes);
  for (size_t i = 0; i < compiled.size(); ++i) {
    const xjax::FunctionDef& f = def.functions[i];
    auto& state = m->functions[f.name];
    if (!state) {
      state = std::make_shared<FunctionState>();
      state->name = f.name;
      state->pool = m->pool;
      state->module = m.get();
      m->names.push_back(f.name);
    }
    SignatureData sig{f.name, {}, {}, f.in_tree, f.out_tree};
    for (const auto& s : f.inputs) sig.inputs.push_back(spec_data(s));
    for (const auto& s : f.outputs) sig.outputs.push_back(spec_data(s));
    state->signatures.push_back(std::move(sig));
    state->overloads.push_back(compiled[i]);
  }
  m->def = std::move(def);
  return m;
}

void apply_global_options(const LoadOptions& o) {
  if (!o.blas_library.empty() && !xjax::blas_loaded() && !xjax::load_blas(o.blas_library))
    throw std::runtime_error("[xjax::load] cannot load the BLAS library '" + o.blas_library +
                             "' (a CBLAS with scipy_-prefixed symbols, as scipy-openblas ships)");
}

xjax::ReadOptions read_options(const LoadOptions& o) {
  xjax::ReadOptions r;
  r.verify_checksum = o.verify_checksum;
  r.max_array_bytes = o.max_array_bytes;
  r.map_file = o.map_file;
  return r;
}

// The overload whose input types the arguments have (the only one is taken as is: its own
// checks name the argument that differs).
const LoadedFunction& pick(const FunctionState& f, const std::vector<CoreArray>& args) {
  if (f.overloads.size() == 1) return *f.overloads[0];
  for (const auto& fn : f.overloads) {
    const auto& ins = fn->def().inputs;
    bool ok = ins.size() == args.size();
    for (size_t i = 0; ok && i < ins.size(); ++i)
      ok = ins[i].type.shape == args[i].shape && ins[i].type.dtype == args[i].dtype;
    if (ok) return *fn;
  }
  std::vector<SpecData> got;
  for (const CoreArray& a : args) got.push_back({a.shape, int(a.dtype), false});
  std::string have;
  for (const auto& s : f.signatures) have += (have.empty() ? "" : "; ") + specs_str(s.inputs);
  throw ArgumentError("[" + f.name + "] no signature takes " + specs_str(got) + "; it has " + have);
}

std::vector<CoreArray> core_args(const std::vector<const Value*>& args) {
  std::vector<CoreArray> in;
  in.reserve(args.size());
  for (const Value* v : args) {
    if (!v) throw ArgumentError("[xjax] an argument is an empty Array (no value)");
    in.push_back(v->a);
  }
  return in;
}

std::vector<CoreArray> run(const LoadedFunction& fn, const std::vector<CoreArray>& in, xjax::ThreadPool* pool) {
  if (!pool) return fn.call_now(in);
  xjax::ThreadPool::Use use(*pool);
  return fn.call_now(in);
}

std::vector<std::shared_ptr<Value>> wrap(std::vector<CoreArray> out) {
  std::vector<std::shared_ptr<Value>> r;
  r.reserve(out.size());
  for (CoreArray& a : out) r.push_back(std::make_shared<Value>(Value{std::move(a)}));
  return r;
}

}  // namespace

const char* dtype_name(int dtype) { return xjax::dtype_name(core_dtype(dtype)); }
size_t dtype_size(int dtype) { return xjax::itemsize(core_dtype(dtype)); }

int64_t num_elements(const std::vector<int64_t>& shape) {
  try {
    return xjax::checked_size(shape, xjax::DType::Bool, "xjax::num_elements").elements;
  } catch (const std::invalid_argument& e) {
    throw ArgumentError(e.what());
  }
}

std::shared_ptr<Value> value_copy(const void* data, size_t nbytes, const std::vector<int64_t>& shape, int dtype) {
  checked_shape(shape, dtype, nbytes, "xjax::Array::copy");
  if (nbytes && !data) throw ArgumentError("[xjax::Array::copy] data is null");
  auto v = std::make_shared<Value>();
  v->a = CoreArray::empty(shape, xjax::DType(dtype));
  if (nbytes) std::memcpy(v->a.data(), data, nbytes);
  return v;
}

std::shared_ptr<Value> value_borrow(const void* data, size_t nbytes, const std::vector<int64_t>& shape, int dtype) {
  checked_shape(shape, dtype, nbytes, "xjax::Array::borrow");
  if (nbytes && !data) throw ArgumentError("[xjax::Array::borrow] data is null");
  const size_t item = xjax::itemsize(xjax::DType(dtype));
  if (reinterpret_cast<uintptr_t>(data) % item != 0)
    throw ArgumentError("[xjax::Array::borrow] the memory is not aligned to its " + std::to_string(item) +
                        "-byte elements");
  auto v = std::make_shared<Value>();
  v->a.shape = shape;
  v->a.dtype = xjax::DType(dtype);
  v->a.buffer = xjax::Buffer::wrap(data, nbytes, nullptr);
  return v;
}

const std::vector<int64_t>& value_shape(const Value& v) { return v.a.shape; }
int value_dtype(const Value& v) { return int(v.a.dtype); }
size_t value_nbytes(const Value& v) { return v.a.nbytes(); }
const void* value_data(const Value& v) {
  v.a.wait();
  return v.a.data();
}

std::shared_ptr<ModuleState> module_load(const std::string& path, const LoadOptions& o) {
  apply_global_options(o);
  return make_module(xjax::read_module_file(path, read_options(o)), o);
}

std::shared_ptr<ModuleState> module_load_memory(const void* data, size_t size, const LoadOptions& o) {
  apply_global_options(o);
  if (size && !data) throw ArgumentError("[xjax::load_from_memory] data is null");
  return make_module(xjax::read_module_bytes(data, size, read_options(o)), o);
}

std::vector<std::string> module_names(const ModuleState& m) { return m.names; }
const std::string& module_producer(const ModuleState& m) { return m.def.producer; }
uint32_t module_format_version(const ModuleState& m) { return m.def.format_version; }
uint32_t module_opset_version(const ModuleState& m) { return m.def.opset_version; }

std::shared_ptr<FunctionState> module_function(const std::shared_ptr<ModuleState>& m, const std::string& name) {
  auto it = m->functions.find(name);
  if (it == m->functions.end()) return nullptr;
  // A handle that keeps its module (and so the mapped file) alive.
  auto f = std::make_shared<FunctionState>(*it->second);
  f->keep = m;
  return f;
}

const std::string& function_name(const FunctionState& f) { return f.name; }
const std::vector<SignatureData>& function_signatures(const FunctionState& f) { return f.signatures; }

std::vector<std::shared_ptr<Value>> function_call(const FunctionState& f, const std::vector<const Value*>& args) {
  std::vector<CoreArray> in = core_args(args);
  const LoadedFunction& fn = pick(f, in);
  try {
    return wrap(run(fn, in, f.pool.get()));
  } catch (const xjax::FormatError&) {
    throw;
  } catch (const ArgumentError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw ArgumentError(e.what());
  }
}

std::shared_ptr<Pending> function_call_async(const FunctionState& f, const std::vector<const Value*>& args) {
  std::vector<CoreArray> in = core_args(args);
  const LoadedFunction& fn = pick(f, in);
  try {
    fn.check(in);
  } catch (const std::invalid_argument& e) {
    throw ArgumentError(e.what());
  }
  ModuleState& m = *f.module;
  std::call_once(m.stream_once, [&] { m.stream = std::make_unique<xjax::Stream>(); });
  auto promise = std::make_shared<std::promise<std::vector<CoreArray>>>();
  auto p = std::make_shared<Pending>();
  p->results = promise->get_future().share();
  std::shared_ptr<LoadedFunction> keep_fn;
  for (const auto& o : f.overloads)
    if (o.get() == &fn) keep_fn = o;
  std::shared_ptr<xjax::ThreadPool> pool = f.pool;
  m.stream->enqueue([promise, keep_fn, pool, in = std::move(in)] {
    try {
      promise->set_value(run(*keep_fn, in, pool.get()));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  return p;
}

std::vector<std::shared_ptr<Value>> pending_wait(const Pending& p) { return wrap(p.results.get()); }

bool pending_ready(const Pending& p) {
  return p.results.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

uint32_t format_version() { return xjax::xjx::kFormatVersion; }
uint32_t opset_version() { return xjax::xjx::kOpsetVersion; }

}  // namespace xjax_detail
