#include "core/buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "core/size.h"

namespace xjax {

namespace {

// Large buffers come from the kernel as fresh pages whose first touch faults one 4 KB page at a
// time; for a 64 MB result that costs more than the kernel itself. So large allocations are 2 MB
// aligned with transparent huge pages, and freed blocks from 64 KB up are kept for reuse (bounded):
// malloc would hand medium blocks back to the kernel (heap trimming) and fault them in again on
// every call of a compiled program (a scan's stacked outputs: a third of its time). Small blocks
// come from malloc, aligned within a block 64 bytes larger whose offset is kept in the byte just
// before the data: aligned_alloc's splitting of a larger chunk cost eager ops on small arrays more
// than their kernels.
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kMinCachedBlock = size_t(64) << 10;
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

class LargeBlockCache {
 public:
  void* take(size_t padded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(padded);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= padded;
    return p;
  }
  // Keeps the block if there is room; otherwise the caller frees it.
  bool give(void* p, size_t padded) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + padded > kMaxCachedBytes) return false;
    free_.emplace(padded, p);
    cached_ += padded;
    return true;
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
};

LargeBlockCache& cache() {
  static LargeBlockCache* c = new LargeBlockCache();  // never destroyed: buffers may outlive statics
  return *c;
}

// std::bad_alloc (Python's MemoryError) that says how much was asked for.
class AllocationError : public std::bad_alloc {
 public:
  explicit AllocationError(size_t nbytes)
      : msg_("[Buffer] out of memory: cannot allocate " + std::to_string(nbytes) + " bytes") {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

size_t padded_size(size_t nbytes) {
  size_t padded = (nbytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (padded == 0) padded = kBufferAlignment;
  if (padded >= kHugePage) padded = (padded + kHugePage - 1) / kHugePage * kHugePage;
  return padded;
}

}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(size_t nbytes) {
  if (nbytes > size_t(kMaxArrayBytes)) throw AllocationError(nbytes);  // so that padding cannot wrap
  size_t padded = padded_size(nbytes);
  if (padded < kMinCachedBlock) {
    char* block = static_cast<char*>(std::malloc(padded + kBufferAlignment));
    if (!block) throw AllocationError(nbytes);
    char* p = block + (kBufferAlignment - reinterpret_cast<uintptr_t>(block) % kBufferAlignment);  // 1 to 64 bytes in
    p[-1] = char(p - block);
    return std::shared_ptr<Buffer>(new Buffer(p, nbytes));
  }
  void* p = cache().take(padded);
  if (!p && padded >= kHugePage) {
    p = std::aligned_alloc(kHugePage, padded);
    if (p) madvise(p, padded, MADV_HUGEPAGE);
  } else if (!p) {
    p = std::aligned_alloc(kBufferAlignment, padded);
  }
  if (!p) throw AllocationError(nbytes);
  return std::shared_ptr<Buffer>(new Buffer(p, nbytes));
}

std::shared_ptr<Buffer> Buffer::wrap(const void* data, size_t nbytes, std::shared_ptr<const void> owner) {
  std::shared_ptr<Buffer> b(new Buffer(const_cast<void*>(data), nbytes));
  b->borrowed_ = true;
  b->owner_ = std::move(owner);
  b->read_only_ = true;
  return b;
}

Buffer::~Buffer() {
  if (borrowed_) return;
  size_t padded = padded_size(nbytes_);
  if (padded < kMinCachedBlock) {
    char* p = static_cast<char*>(data_);
    std::free(p - static_cast<unsigned char>(p[-1]));
    return;
  }
  if (!cache().give(data_, padded)) std::free(data_);
}

}  // namespace xjax
