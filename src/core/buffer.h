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

 private:
  Buffer(void* data, size_t nbytes) : data_(data), nbytes_(nbytes) {}
  void* data_;
  size_t nbytes_;
};

}  // namespace xjax
