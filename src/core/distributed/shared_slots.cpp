#include "core/distributed/shared_slots.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <stdexcept>

namespace xjax::mpi {

namespace {

constexpr uint64_t kMagic = 0x786a61782d736c32;  // "xjax-sl2": this layout
constexpr size_t kLine = 64;  // the segment's head owns a cache line
constexpr size_t kSlotBytes = 2 * SharedSlots::kMessageBytes;
static_assert(SharedSlots::kMessageBytes % kLine == 0, "messages start on cache lines");
static_assert(sizeof(int64_t) + SharedSlots::kHeadBytes == kLine, "a message's number and head fill its first line");
static_assert(std::atomic<int64_t>::is_always_lock_free, "a counter shared between processes must be lock-free");

struct SegmentHead {
  uint64_t magic;
  int64_t processes, message_bytes;
};

size_t segment_bytes(int processes) { return kLine + size_t(processes) * kSlotBytes; }

[[noreturn]] void fail(const std::string& what, const std::string& name) {
  throw std::runtime_error("[shared memory] " + what + " " + name + ": " + std::strerror(errno));
}

// Maps the open file fd of `bytes`, read and write.
unsigned char* map(int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("cannot map", name);
  return static_cast<unsigned char*>(p);
}

// Closes fd when it goes out of scope.
struct FileCloser {
  int fd;
  ~FileCloser() { close(fd); }
};

}  // namespace

std::string SharedSlots::create(int processes) {
  if (processes < 1 || processes > (1 << 16))
    throw std::invalid_argument("[shared memory] cannot hold " + std::to_string(processes) + " processes");
  std::random_device entropy;
  char name[64];
  std::snprintf(name, sizeof name, "/xjax-%d-%08x%08x%08x", int(getpid()), entropy(), entropy(), entropy());
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) fail("cannot create", name);
  FileCloser closer{fd};
  const size_t bytes = segment_bytes(processes);
  unsigned char* base = nullptr;
  try {
    // (its pages reserved now: a write to a page that a full /dev/shm cannot back would be SIGBUS)
    errno = posix_fallocate(fd, 0, off_t(bytes));
    if (errno != 0) fail("cannot reserve " + std::to_string(bytes) + " bytes for", name);
    base = map(fd, bytes, name);
  } catch (...) {
    shm_unlink(name);
    throw;
  }
  for (size_t m = 0; m < 2 * size_t(processes); ++m) new (base + kLine + m * kMessageBytes) std::atomic<int64_t>(0);
  new (base) SegmentHead{kMagic, processes, int64_t(kMessageBytes)};
  munmap(base, bytes);
  return name;
}

void SharedSlots::unlink(const std::string& name) { shm_unlink(name.c_str()); }

SharedSlots::SharedSlots(const std::string& name, int processes, int rank) : processes_(processes), rank_(rank) {
  if (processes < 1 || rank < 0 || rank >= processes)
    throw std::invalid_argument("[shared memory] process " + std::to_string(rank) + " of " +
                                std::to_string(processes));
  if (name.size() < 2 || name[0] != '/' || name.find('/', 1) != std::string::npos)
    throw std::invalid_argument("[shared memory] not a segment name: '" + name + "'");
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) fail("cannot open", name);
  FileCloser closer{fd};
  struct stat st;
  bytes_ = segment_bytes(processes);
  if (fstat(fd, &st) != 0) fail("cannot read the size of", name);
  if (size_t(st.st_size) != bytes_)
    throw std::runtime_error("[shared memory] " + name + " has " + std::to_string(st.st_size) + " bytes, not the " +
                             std::to_string(bytes_) + " of " + std::to_string(processes) + " processes' slots");
  base_ = map(fd, bytes_, name);
  const SegmentHead& h = *reinterpret_cast<const SegmentHead*>(base_);
  if (h.magic != kMagic || h.processes != processes || h.message_bytes != int64_t(kMessageBytes)) {
    munmap(base_, bytes_);
    throw std::runtime_error("[shared memory] " + name + " is not a segment of xjax for " +
                             std::to_string(processes) + " processes");
  }
}

SharedSlots::~SharedSlots() { munmap(base_, bytes_); }

unsigned char* SharedSlots::message(int q, int64_t n) const {
  return base_ + kLine + size_t(q) * kSlotBytes + size_t(n & 1) * kMessageBytes;
}

std::atomic<int64_t>& SharedSlots::round(int q, int64_t n) const {
  return *std::launder(reinterpret_cast<std::atomic<int64_t>*>(message(q, n)));
}

}  // namespace xjax::mpi
