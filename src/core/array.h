// The runtime's value: a buffer with a shape and dtype, possibly still being computed.
#pragma once
#include <memory>

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/event.h"
#include "core/shape.h"

namespace xjax {

struct Array {
  std::shared_ptr<Buffer> buffer;
  Shape shape;
  DType dtype = DType::Float32;
  std::shared_ptr<Event> ready;  // null once known to be computed

  int64_t size() const { return numel(shape); }
  size_t nbytes() const { return size_t(size()) * itemsize(dtype); }
  void* data() const { return buffer->data(); }
  // Waits for the producing computation; rethrows its error.
  void wait() const {
    if (ready) ready->wait();
  }

  static Array empty(const Shape& shape, DType dtype) {
    Array a;
    a.shape = shape;
    a.dtype = dtype;
    a.buffer = Buffer::allocate(size_t(numel(shape)) * itemsize(dtype));
    return a;
  }
};

}  // namespace xjax
