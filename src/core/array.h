// The runtime's value: a buffer with a shape and dtype, possibly still being computed.
#pragma once
#include <memory>

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/event.h"
#include "core/shape.h"
#include "core/size.h"
#include "core/stream.h"

namespace xjax {

struct Array {
  std::shared_ptr<Buffer> buffer;
  Shape shape;
  DType dtype = DType::Float32;
  std::shared_ptr<Event> ready;  // null once known to be computed

  int64_t size() const { return checked_size(shape, dtype, "Array").elements; }
  size_t nbytes() const { return size_t(checked_size(shape, dtype, "Array").bytes); }
  void* data() const { return buffer->data(); }
  // Whether the producing computation is done (or there was none).
  bool computed() const { return !ready || ready->is_set(); }
  // Waits for the producing computation; rethrows its error. On the stream's thread (a host
  // callback) a value still queued can only be computed after the running task: an error, not a hang.
  void wait() const {
    if (!ready) return;
    if (Stream::in_task() && !computed())
      throw std::runtime_error("[wait] a value still queued behind the running computation was waited for from "
                               "inside it (a host callback): it would wait forever");
    ready->wait();
  }
  // Whether the buffer exists and holds exactly the bytes that the shape and dtype need.
  bool buffer_matches() const { return buffer && buffer->nbytes() == nbytes(); }

  static Array empty(const Shape& shape, DType dtype) {
    Array a;
    a.shape = shape;
    a.dtype = dtype;
    a.buffer = Buffer::allocate(size_t(checked_size(shape, dtype, "Array").bytes));
    return a;
  }
};

}  // namespace xjax
