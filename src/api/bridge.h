// Between the public API (api.cpp, which sees include/xjax only) and the core (bridge.cpp, which
// sees src/core only): the two name their own Array and DType, so no file includes both. This
// header uses std types and the opaque xjax_detail structs only; dtypes cross as ints (the public
// enum lists them in the core's order).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xjax_detail {

struct Value;
struct ModuleState;
struct FunctionState;
struct Pending;

struct SpecData {
  std::vector<int64_t> shape;
  int dtype;
  bool weak;
};

struct SignatureData {
  std::string name;
  std::vector<SpecData> inputs, outputs;
  std::string in_tree, out_tree;
};

struct LoadOptions {
  int num_threads;
  std::string blas_library;
  bool verify_checksum;
  bool map_file;
  int64_t max_array_bytes;
};

const char* dtype_name(int dtype);
size_t dtype_size(int dtype);
int64_t num_elements(const std::vector<int64_t>& shape);  // ArgumentError when negative or too large

std::shared_ptr<Value> value_copy(const void* data, size_t nbytes, const std::vector<int64_t>& shape, int dtype);
std::shared_ptr<Value> value_borrow(const void* data, size_t nbytes, const std::vector<int64_t>& shape, int dtype);
const std::vector<int64_t>& value_shape(const Value& v);
int value_dtype(const Value& v);
size_t value_nbytes(const Value& v);
const void* value_data(const Value& v);  // computed (waits)

std::shared_ptr<ModuleState> module_load(const std::string& path, const LoadOptions& options);
std::shared_ptr<ModuleState> module_load_memory(const void* data, size_t size, const LoadOptions& options);
std::vector<std::string> module_names(const ModuleState& m);
const std::string& module_producer(const ModuleState& m);
uint32_t module_format_version(const ModuleState& m);
uint32_t module_opset_version(const ModuleState& m);
// Null when there is no function of that name.
std::shared_ptr<FunctionState> module_function(const std::shared_ptr<ModuleState>& m, const std::string& name);

const std::string& function_name(const FunctionState& f);
const std::vector<SignatureData>& function_signatures(const FunctionState& f);
std::vector<std::shared_ptr<Value>> function_call(const FunctionState& f, const std::vector<const Value*>& args);
std::shared_ptr<Pending> function_call_async(const FunctionState& f, const std::vector<const Value*>& args);
std::vector<std::shared_ptr<Value>> pending_wait(const Pending& p);
bool pending_ready(const Pending& p);

uint32_t format_version();
uint32_t opset_version();

}  // namespace xjax_detail
