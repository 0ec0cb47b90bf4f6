// xjax for C++: run functions exported from Python with xjax.export (.xjx files) in a C++ program,
// without Python. Link the CMake target xjax::xjax (find_package(xjax); `python -m xjax --cmake-dir`
// prints the directory when xjax was installed with pip).
//
//   xjax::Module m = xjax::load("model.xjx");
//   xjax::Function predict = m.function("predict");
//   std::vector<float> x(batch * 64);
//   std::vector<xjax::Array> out = predict.call({xjax::Array::borrow(x.data(), {batch, 64})});
//   std::vector<int32_t> labels = out[0].to_vector<int32_t>();
//
// Errors: xjax::FormatError (the file), xjax::ArgumentError (arguments, sizes of caller memory,
// unknown names) -- both std::invalid_argument; std::runtime_error for I/O, a BLAS library that
// does not load, or a failed computation. Module, Function and Array are cheap to copy (shared
// handles) and safe to use from several threads at once; an Array's contents never change.
#pragma once
#include <cstddef>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xjax/errors.h"

namespace xjax_detail {  // the implementation behind the handles
struct Value;
struct ModuleState;
struct FunctionState;
struct Pending;
}  // namespace xjax_detail

namespace xjax {
inline namespace v1 {

// Element types, as in xjax.numpy.
enum class DType : int {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, BFloat16, Float32, Float64,
  Complex64, Complex128,
  Float8E4M3FN, Float8E5M2,  // ml_dtypes' float8_e4m3fn and float8_e5m2, one byte each
};
const char* dtype_name(DType dtype);  // "float32", ...
size_t dtype_size(DType dtype);       // bytes per element

template <typename T> struct DTypeOf;  // the DType of a C++ element type (float16/bfloat16 have none)
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::UInt64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<std::complex<float>> { static constexpr DType value = DType::Complex64; };
template <> struct DTypeOf<std::complex<double>> { static constexpr DType value = DType::Complex128; };

using Shape = std::vector<int64_t>;

// The number of elements of a shape (1 for a scalar). Throws ArgumentError for a negative
// dimension or an overflowing product.
int64_t num_elements(const Shape& shape);

// An immutable n-dimensional array, row-major. Made from the caller's memory (copied, or borrowed
// without a copy); returned by calls. Copies of an Array share its data.
class Array {
 public:
  Array() = default;  // no value (valid() is false)

  // A copy of `nbytes` bytes at `data`; nbytes must be the shape's elements times the dtype's size.
  static Array copy(const void* data, size_t nbytes, Shape shape, DType dtype);
  template <typename T>
  static Array copy(const T* data, Shape shape) {
    const int64_t n = num_elements(shape);
    return copy(data, size_t(n) * sizeof(T), std::move(shape), DTypeOf<T>::value);
  }
  template <typename T>
  static Array copy(const std::vector<T>& v, Shape shape) {
    return copy(v.data(), v.size() * sizeof(T), std::move(shape), DTypeOf<T>::value);
  }
  template <typename T>
  static Array scalar(T v) {
    return copy(&v, sizeof(T), {}, DTypeOf<T>::value);
  }
  // The caller's memory, read in place (no copy). It must stay valid and unchanged until every
  // call given this Array has returned (for call_async: until its Future's wait() returned) and
  // must be aligned to the element size. The same size rule as copy().
  static Array borrow(const void* data, size_t nbytes, Shape shape, DType dtype);
  template <typename T>
  static Array borrow(const T* data, Shape shape) {
    const int64_t n = num_elements(shape);
    return borrow(data, size_t(n) * sizeof(T), std::move(shape), DTypeOf<T>::value);
  }

  bool valid() const { return value_ != nullptr; }
  const Shape& shape() const;
  DType dtype() const;
  int64_t size() const;   // elements
  size_t nbytes() const;  // bytes
  // The elements, row-major; valid while this Array (or a copy of it) lives.
  const void* data() const;
  // The same, typed; ArgumentError unless T is the array's dtype.
  template <typename T>
  const T* data() const {
    check_dtype(DTypeOf<T>::value);
    return static_cast<const T*>(data());
  }
  // Copies the elements to caller memory; nbytes must equal nbytes().
  void copy_to(void* out, size_t nbytes) const;
  template <typename T>
  std::vector<T> to_vector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + size());
  }
  // The value of a one-element array.
  template <typename T>
  T item() const {
    if (size() != 1) throw_not_one_element();
    return data<T>()[0];
  }

 private:
  explicit Array(std::shared_ptr<xjax_detail::Value> v) : value_(std::move(v)) {}
  void check_dtype(DType want) const;
  [[noreturn]] void throw_not_one_element() const;
  std::shared_ptr<xjax_detail::Value> value_;
  friend class Function;
  friend class Future;
};

// One argument or result: shape, dtype, and whether it was a Python scalar (weakly typed).
struct TensorSpec {
  Shape shape;
  DType dtype;
  bool weak_type = false;
};

// What a function takes and returns. The pytree structures say how Python nests the flat
// arguments and results (JSON; docs/format.md): arguments are ((args...), {kwargs}).
struct Signature {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string in_tree;
  std::string out_tree;
};

// The results of call_async, once computed.
class Future {
 public:
  // Waits for the results; rethrows the computation's error. May be called again (same results).
  std::vector<Array> wait() const;
  bool ready() const;

 private:
  std::shared_ptr<xjax_detail::Pending> pending_;
  friend class Function;
};

// A function of a module: one name, one or more signatures (a call picks the one whose input
// shapes and dtypes the arguments have).
class Function {
 public:
  const std::string& name() const;
  const Signature& signature() const;  // the first signature (the only one, usually)
  const std::vector<Signature>& signatures() const;
  // Runs on the calling thread (kernels on the module's thread pool); returns the results, computed.
  // ArgumentError when no signature takes these arguments (the message lists them).
  std::vector<Array> call(const std::vector<Array>& args) const;
  // Queues the call on the module's executor and returns at once. Arguments are checked now.
  Future call_async(const std::vector<Array>& args) const;

 private:
  static std::vector<const xjax_detail::Value*> values(const std::vector<Array>& args, const std::string& fn);
  std::shared_ptr<xjax_detail::FunctionState> state_;
  std::shared_ptr<const std::vector<Signature>> signatures_;
  friend class Module;
};

struct Options {
  // Threads for the kernels of this module's calls; 0: the process-wide pool (its size is the
  // environment variable XJAX_NUM_THREADS, else the number of cores).
  int num_threads = 0;
  // A CBLAS library for matrix products (scipy-openblas's libscipy_openblas.so, which
  // `python -c "import xjax._src.blas as b; print(b.find_blas_library())"` locates); loaded once per
  // process, std::runtime_error when it cannot be. Empty: the one already loaded, else the
  // built-in kernels.
  std::string blas_library;
  bool verify_checksum = true;  // check the file's checksum (reads every byte of it)
  bool map_file = true;         // map the file and use its weights in place; false: read it into memory
  // Refuse files whose values or constants need more bytes than this (a hostile file cannot make
  // loading allocate more).
  int64_t max_array_bytes = int64_t(1) << 34;
};

// A loaded .xjx file: its functions, compiled for this machine.
class Module {
 public:
  std::vector<std::string> function_names() const;
  bool has_function(const std::string& name) const;
  // ArgumentError when the module has no such function (the message lists those it has).
  Function function(const std::string& name) const;
  const std::string& producer() const;  // who wrote the file ("xjax 0.1.0")
  uint32_t format_version() const;
  uint32_t opset_version() const;

 private:
  std::shared_ptr<xjax_detail::ModuleState> state_;
  friend Module load(const std::string&, const Options&);
  friend Module load_from_memory(const void*, size_t, const Options&);
};

// Loads an .xjx file (FormatError when it cannot be read; std::runtime_error when it cannot be opened).
Module load(const std::string& path, const Options& options = Options());
// Loads an .xjx file held in memory (copied once).
Module load_from_memory(const void* data, size_t size, const Options& options = Options());

const char* version();              // of this library, e.g. "0.1.0"
uint32_t supported_format_version();  // the .xjx format version it reads
uint32_t supported_opset_version();   // the newest opset it reads

}  // namespace v1
}  // namespace xjax
