// Aligned, reference-counted host memory.
#pragma once
#include <cstddef>
#include <memory>

namespace xjax {

constexpr size_t kBufferAlignment = 64;

class Buffer {
 public:
  static std::shared_ptr<Buffer> allocate(size_t nbytes);
  // A read-only buffer over memory someone else owns (the weights of a mapped .xjx file): `owner`
  // is kept alive as long as the buffer (null: the caller keeps the memory alive longer than
  // the buffer). `data` must be 64-byte aligned.
  static std::shared_ptr<Buffer> wrap(const void* data, size_t nbytes, std::shared_ptr<const void> owner);
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
  bool borrowed_ = false;              // the memory is owner_'s, not ours to free
  std::shared_ptr<const void> owner_;
};

}  // namespace xjax
