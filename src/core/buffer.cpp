#include "core/buffer.h"

#include <cstdlib>
#include <new>

namespace xjax {

std::shared_ptr<Buffer> Buffer::allocate(size_t nbytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; never zero.
  size_t padded = (nbytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (padded == 0) padded = kBufferAlignment;
  void* p = std::aligned_alloc(kBufferAlignment, padded);
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<Buffer>(new Buffer(p, nbytes));
}

Buffer::~Buffer() { std::free(data_); }

}  // namespace xjax
