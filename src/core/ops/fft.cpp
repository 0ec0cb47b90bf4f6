// The shape and dtype rule of fft (semantics: ops/fft.h). Messages follow jax.lax.fft's; every
// attribute is checked here, so a kernel (or a graph read from a file) never sees a bad one.
#include "core/ops/fft.h"

#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

const char* const kNames[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

Shape tail(const Shape& s, size_t k) { return Shape(s.end() - int64_t(k), s.end()); }

std::vector<TypeInfo> infer_fft(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::fft_;
  const FftType type = fft_type_attr(attrs);
  const std::vector<int64_t>& lengths = ints_attr(op, attrs, "fft_lengths");
  const TypeInfo& x = in[0];
  const std::string lens = shape_str(Shape(lengths.begin(), lengths.end()));
  if (lengths.empty() || lengths.size() > 3)
    fail_value(op, "fft_lengths must have 1 to 3 entries, got " + lens);
  for (int64_t n : lengths)
    if (n < 0 || n > kMaxFftLength)
      fail_value(op, "fft_lengths must lie in [0, 2**31], got " + lens);
  const size_t k = lengths.size();
  if (k > x.shape.size())
    fail_value(op, "FFT input shape " + shape_str(x.shape) + " must have at least as many input dimensions as "
                       "fft_lengths " + lens + ".");
  const Shape want(lengths.begin(), lengths.end());
  Shape out = x.shape;
  DType dtype = x.dtype;
  if (type == FftType::Rfft) {
    if (x.dtype != DType::Float32 && x.dtype != DType::Float64)
      fail_value(op, std::string("RFFT input must be float32 or float64, got ") + dtype_name(x.dtype));
    if (tail(x.shape, k) != want)
      fail_value(op, "RFFT input shape " + shape_str(x.shape) + " minor dimensions must be equal to fft_lengths " +
                         lens);
    out.back() = lengths.back() / 2 + 1;
    dtype = x.dtype == DType::Float32 ? DType::Complex64 : DType::Complex128;
  } else {
    if (!is_complex(x.dtype))
      fail_value(op, std::string(kNames[int(type)]) + " input must be complex64 or complex128, got " +
                        dtype_name(x.dtype));
    if (type == FftType::Irfft) {
      Shape minor = tail(x.shape, k);
      const int64_t half = lengths.back() / 2 + 1;
      if (Shape(minor.begin(), minor.end() - 1) != Shape(want.begin(), want.end() - 1) || minor.back() != half)
        fail_value(op, "IRFFT input shape " + shape_str(x.shape) + " minor dimensions must be equal to fft_lengths " +
                           lens + " but for the last, which must be fft_lengths[-1] // 2 + 1 = " +
                           std::to_string(half));
      out.back() = lengths.back();
      dtype = x.dtype == DType::Complex64 ? DType::Float32 : DType::Float64;
    } else if (tail(x.shape, k) != want) {
      fail_value(op, std::string(kNames[int(type)]) + " input shape " + shape_str(x.shape) +
                         " minor dimensions must be equal to fft_lengths " + lens);
    }
  }
  return {{out, dtype}};
}

}  // namespace

FftType fft_type_attr(const Attrs& attrs) {
  const std::string& s = str_attr(OpId::fft_, attrs, "fft_type");
  for (int i = 0; i < 4; ++i)
    if (s == kNames[i]) return FftType(i);
  fail_value(OpId::fft_, "fft_type must be one of 'FFT', 'IFFT', 'RFFT', 'IRFFT', got '" + s + "'");
}

const char* fft_type_name(FftType t) { return kNames[int(t)]; }

void register_fft_infer(OpTable& t) { t.set_infer(OpId::fft_, infer_fft); }

}  // namespace xjax
