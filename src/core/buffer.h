// Aligned, reference-counted host memory.
#pragma once
#include <cstddef>
#include <memory>

namespace xjax {

constexpr size_t kBufferAlignment = 64;

class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(size_t nbytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  // A buffer that callers share but must never write to (an executable's constant, handed out
  // as a result): set once before the buffer is shared.
  void set_read_only() { read_only_ = true; }
  bool read_only() const { return read_only_; }

 private:
  Buffer(void* data, size_t nbytes) : data_(data), nbytes_(nbytes) {}
  void* data_;
  size_t nbytes_;
  bool read_only_ = false;
};

}  // namespace xjax
