// The all_reduce op across processes, over the MPI shim the host installed (mpi.h, mpi_shim.h).
#include "core/distributed/mpi.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/cpu/elementwise_loops.h"
#include "core/cpu/kernels.h"
#include "core/distributed/shared_slots.h"
#include "core/errors.h"
#include "core/ops/op_attrs.h"

namespace xjax {
extern const char kMpiShimText[];  // mpi_shim.h and mpi_shim.c (cmake/embed_text.cmake)
}

namespace xjax::mpi {
namespace {

constexpr size_t kSigBytes = 256;  // the signature: <seq int64, crc32 uint32, length uint32, text>
constexpr size_t kSigHead = 16;
constexpr double kSpinSeconds = 0.002;     // poll without sleeping this long (the others are usually there)
// How long a wait goes on after a notice arrives: a process that exits right after finishing a
// collective sends its notice while that collective's last messages may still be on their way here.
constexpr double kNoticeGraceSeconds = 0.5;
constexpr double kRollCallSeconds = 1.0;   // how long a process that timed out waits for the roll call's answers

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<unsigned char>;

struct State {
  Api api;
  bool ready = false;
  // a failed collective left operations in flight, or the processes' shared rounds out of step:
  // no collective runs after it
  bool broken = false;
  int64_t seq = 0, exited_after = INT64_MAX;
  double timeout = 300;
  std::string fail_kind, fail_msg;
  std::unique_ptr<SharedSlots> shared;  // the processes' segment, when they all share this host
  int64_t round = 0;                    // the last round this process passed through it
};

State& state() {
  static State s;
  return s;
}

[[noreturn]] void fail(const char* kind, const std::string& msg) {
  State& s = state();
  s.fail_kind = kind;
  s.fail_msg = msg;
  throw std::runtime_error("[all_reduce] " + msg);
}

void check_rc(int rc, const char* call) {
  if (rc != 0) fail("mpi", std::string(call) + " failed (MPI error code " + std::to_string(rc) + ")");
}

std::string seconds(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", t);
  return buf;
}

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string where() { return "process " + std::to_string(state().api.rank); }

// The description in a signature, as the host's _decode shows it.
std::string description(const unsigned char* sig) {
  uint32_t len;
  std::memcpy(&len, sig + 12, 4);
  size_t shown = std::min<size_t>(len, kSigBytes - kSigHead);
  std::string text(reinterpret_cast<const char*>(sig) + kSigHead, shown);
  return shown < len ? text + "..." : text;
}

// A collective's description, made from its signature when a message first needs it (a call that
// succeeds needs none).
class Description {
 public:
  explicit Description(const std::string& sig) : sig_(sig) {}
  const std::string& operator()() const {
    if (text_.empty()) text_ = description(reinterpret_cast<const unsigned char*>(sig_.data()));
    return text_;
  }

 private:
  const std::string& sig_;
  mutable std::string text_;
};

// ---- MPI operations in flight, and the memory they use ------------------------------------------

// Operations abandoned in flight with the memory they read and write, kept for the life of the
// process: a deliberate leak (reachable from here), bounded as mpi.h says -- at most one set per
// installation, since a process that abandoned one runs no further collective.
struct Abandoned {
  std::vector<xjax_mpi_request> requests;
  std::vector<std::shared_ptr<const void>> memory;
};

std::mutex abandoned_mutex;

std::vector<Abandoned>& abandoned_list() {
  static auto* list = new std::vector<Abandoned>;
  return *list;
}

// The MPI operations of one step of a collective: their requests and the memory they use. Destroyed
// with operations still in flight (an error ended the wait, or posting the next one failed), it
// keeps that memory alive for good instead of letting it be freed: the core's own buffers, and the
// operands' and results' buffers through Tensor::owner (pin).
class InFlight {
 public:
  explicit InFlight(size_t n) {
    requests_.reserve(n);
    done_.reserve(n);
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() {
    if (left_) abandon();
  }

  // Storage for the request of the operation about to be posted (stable: at most n of them).
  xjax_mpi_request* post() {
    if (requests_.size() == requests_.capacity()) throw std::logic_error("[all_reduce] more requests than reserved");
    requests_.emplace_back();
    done_.push_back(0);
    ++left_;
    return &requests_.back();
  }
  void keep(std::shared_ptr<const void> memory) { memory_.push_back(std::move(memory)); }
  void pin(const Tensor& t) {
    if (t.owner) pinned_.push_back(t.owner);
  }
  size_t posted() const { return requests_.size(); }
  // Whether the operations [from, to) are done.
  bool done(size_t from, size_t to) const {
    return std::all_of(done_.begin() + std::ptrdiff_t(from), done_.begin() + std::ptrdiff_t(to), [](char d) { return d; });
  }

  // Tests each pending operation of [from, to) once.
  void test(const Api& a, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      if (done_[i]) continue;
      int flag = 0;
      check_rc(a.test(&requests_[i], &flag), "MPI_Test");
      if (flag) done_[i] = 1, --left_;
    }
  }

 private:
  void abandon() noexcept {
    Abandoned a;
    a.requests = std::move(requests_);
    a.memory = std::move(memory_);
    for (const std::shared_ptr<Buffer>* owner : pinned_)
      if (*owner) a.memory.push_back(*owner);
    std::lock_guard<std::mutex> lock(abandoned_mutex);
    abandoned_list().push_back(std::move(a));
    state().broken = true;
  }

  std::vector<xjax_mpi_request> requests_;
  std::vector<char> done_;
  size_t left_ = 0;
  std::vector<std::shared_ptr<const void>> memory_;
  std::vector<const std::shared_ptr<Buffer>*> pinned_;
};

// Staging buffers (packing several operands, an operand that its result overwrites, operands
// whose buffers the core cannot keep alive), kept between runs: a fresh large buffer per run costs
// its page faults. One still held by abandoned operations is never handed out again.
std::shared_ptr<Bytes> scratch(size_t j, size_t nbytes) {
  thread_local std::vector<std::shared_ptr<Bytes>> kept;
  if (kept.size() <= j) kept.resize(j + 1);
  std::shared_ptr<Bytes>& b = kept[j];
  if (!b || b.use_count() != 1) b = std::make_shared<Bytes>();
  if (b->size() < nbytes) b->resize(nbytes);
  return b;
}

// Small messages of the failure paths (roll calls and their answers), each kept until MPI is done
// with it; those it never finishes stay for the life of the process (reachable from here).
struct Outgoing {
  xjax_mpi_request request;
  int64_t message = 0;
};

std::vector<std::unique_ptr<Outgoing>>& outbox() {
  static auto* v = new std::vector<std::unique_ptr<Outgoing>>;
  return *v;
}

void send_small(int dest, int tag, int64_t message) {
  const Api& a = state().api;
  outbox().push_back(std::make_unique<Outgoing>());
  Outgoing& o = *outbox().back();
  o.message = message;
  check_rc(a.isend(&o.message, int(sizeof o.message), dest, tag, XJAX_MPI_CONTROL, &o.request), "MPI_Isend");
}

void flush_outbox() {
  const Api& a = state().api;
  auto& v = outbox();
  for (size_t i = 0; i < v.size();) {
    int flag = 0;
    check_rc(a.test(&v[i]->request, &flag), "MPI_Test");
    if (flag) {
      v[i] = std::move(v.back());
      v.pop_back();
    } else {
      ++i;
    }
  }
}

// Receives every message waiting on `tag` of the control communicator (each probed first: no
// receive is ever left posted), passing on_message its source and first int64.
template <typename F>
void receive_all(int tag, F&& on_message) {
  const Api& a = state().api;
  for (;;) {
    int found = 0, source = -1, bytes = 0;
    check_rc(a.iprobe(-1, tag, XJAX_MPI_CONTROL, &found, &source, &bytes), "MPI_Iprobe");
    if (!found) return;
    Bytes buf(std::max<size_t>(size_t(std::max(bytes, 0)), sizeof(int64_t)), 0);
    check_rc(a.recv(buf.data(), std::max(bytes, 0), source, tag, XJAX_MPI_CONTROL), "MPI_Recv");
    int64_t m;
    std::memcpy(&m, buf.data(), sizeof m);
    on_message(source, m);
  }
}

// Tells every process that asked which collective this one waits in (its number; 0: none yet).
void answer_roll_calls() {
  receive_all(state().api.roll_tag,
              [](int source, int64_t) { send_small(source, state().api.answer_tag, state().seq); });
  flush_outbox();
}

// After a timeout: asks every other process which collective it waits in. Those that do not answer
// with this one's number within kRollCallSeconds, as a list ("1, 3"); empty when all did.
std::string absent_processes() {
  State& s = state();
  const Api& a = s.api;
  for (int q = 0; q < a.size; ++q)
    if (q != a.rank) send_small(q, a.roll_tag, s.seq);
  std::vector<int64_t> answer(size_t(a.size), -1);
  answer[size_t(a.rank)] = s.seq;
  const double grace = std::min(kRollCallSeconds, s.timeout);
  const Clock::time_point start = Clock::now();
  for (;;) {
    answer_roll_calls();
    receive_all(a.answer_tag, [&](int source, int64_t seq) {
      if (source >= 0 && source < a.size) answer[size_t(source)] = seq;
    });
    if (std::all_of(answer.begin(), answer.end(), [&](int64_t n) { return n == s.seq; }) || since(start) > grace)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string absent;
  for (int q = 0; q < a.size; ++q)
    if (answer[size_t(q)] != s.seq) absent += (absent.empty() ? "" : ", ") + std::to_string(q);
  return absent;
}

// Polls until done() is true. Meanwhile it answers roll calls, and a notice from another process
// (it failed or exited), or one known to have exited before this collective, ends the wait unless
// done() comes within kNoticeGraceSeconds (a notice that does not concern this collective stays
// queued for the next); so does the timeout, with on_timeout()'s message (or the notice's, when
// one came: it says why the others stopped). Ended so, the operations in flight keep their memory.
void wait_until(const std::function<bool()>& done, const Description& desc,
                const std::function<std::string()>& on_timeout) {
  State& s = state();
  const Api& a = s.api;
  if (done()) return;
  const Clock::time_point start = Clock::now();  // (after the first poll: most waits end in it)
  Clock::time_point noticed;
  bool notice = false;
  for (int64_t polls = 1;; ++polls) {
    if (done()) return;
    if (polls % 64) continue;
    answer_roll_calls();
    int pending = 0, source = -1, bytes = 0;
    if (!notice) check_rc(a.iprobe(-1, a.notice_tag, XJAX_MPI_CONTROL, &pending, &source, &bytes), "MPI_Iprobe");
    if (!notice && (pending || s.exited_after < s.seq)) {
      notice = true;
      noticed = Clock::now();
    }
    double elapsed = since(start);
    if (notice && (since(noticed) > kNoticeGraceSeconds || elapsed > s.timeout)) fail("notice", desc());
    if (elapsed > s.timeout) fail("timeout", on_timeout());
    if (elapsed > kSpinSeconds)
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.001, elapsed / 100)));
  }
}

// Waits until the operations [from, to) of `ops` are done.
void wait(InFlight& ops, size_t from, size_t to, const Description& desc, const std::function<std::string()>& on_timeout) {
  const Api& a = state().api;
  wait_until([&] {
    ops.test(a, from, to);
    return ops.done(from, to);
  }, desc, on_timeout);
}

// ---- the exchange: an all-reduce whose messages carry the check ---------------------------------

// Every message of an exchange starts with a head: the check of the processes it speaks for.
struct Head {
  int64_t key[6];     // maxima of (number, crc32, length) and of their negations
  int64_t mismatch;   // one of them received a message of another collective
  int64_t bytes;      // the size of the message it heads, as sent
};
constexpr size_t kHeadBytes = sizeof(Head);
static_assert(kHeadBytes == 64, "the head keeps the payload 8-byte aligned");

Head& head(Bytes& m) { return *reinterpret_cast<Head*>(m.data()); }

// Whether every process spoken for runs the same collective: each maximum is minus the maximum of
// its negation (the minimum).
bool agree(const Head& h) {
  return !h.mismatch && h.key[0] == -h.key[3] && h.key[1] == -h.key[4] && h.key[2] == -h.key[5];
}

// Messages of at most kFragmentedUpTo bytes go as fragments of at most kFragmentBytes: Open MPI's
// shared-memory transport sends those eagerly, a larger message only after a round trip of its
// own. Measured (2 processes, bench/allreduce.py's "in one program"): 4,000 bytes there and back
// 2.1 us, 4,096 bytes 4.0 us; a 64 KiB all-reduce 11-12 us in fragments, 13 in one message; but a
// 256 KiB one 35-37 us in one message, 46 in fragments of 4,000 bytes and 51 of 32,000.
constexpr size_t kFragmentBytes = 4000, kFragmentedUpTo = size_t(1) << 17;

size_t fragment_bytes(size_t bytes) { return bytes <= kFragmentedUpTo ? kFragmentBytes : bytes; }
size_t fragments(size_t bytes) { return (bytes + fragment_bytes(bytes) - 1) / fragment_bytes(bytes); }

// Operands of one dtype, reduced together: packed at `offset` of the payload.
struct Group {
  DType dtype;
  ElementwiseLoop combine;
  std::vector<size_t> operands;
  size_t count = 0, offset = 0;
};

// Copies the group's operands, one after another, to `to`.
void pack(const Group& g, const std::vector<Tensor>& in, unsigned char* to) {
  for (size_t i : g.operands) {
    size_t n = size_t(in[i].size()) * itemsize(g.dtype);
    if (n) std::memcpy(to, in[i].data, n);
    to += n;
  }
}

// Copies the group's results from `from` into their tensors.
void unpack(const Group& g, const unsigned char* from, const std::vector<Tensor>& out) {
  for (size_t i : g.operands) {
    size_t n = size_t(out[i].size()) * itemsize(g.dtype);
    if (n) std::memcpy(out[i].data, from, n);
    from += n;
  }
}

// The message of a wait for operations already posted that gives up.
std::string stopped_during(const Description& desc) {
  const State& s = state();
  return "collective #" + std::to_string(s.seq) + " (" + desc() + ") did not complete on " + where() + " within " +
         seconds(s.timeout) + " s: a process died or stopped during it";
}

// The message exchange of one collective: sends and receives of heads and payloads, the buffers
// they use kept with `ops` (alive for good if a wait gives up).
class Exchange {
 public:
  Exchange(InFlight& ops, const std::vector<Group>& groups, size_t payload, const Description& desc,
           std::function<std::string()> on_timeout)
      : ops_(ops), groups_(groups), full_(kHeadBytes + payload), desc_(desc), on_timeout_(std::move(on_timeout)) {}

  size_t bytes() const { return full_; }

  // A staging buffer of at least n bytes, this exchange's next.
  std::shared_ptr<Bytes> buffer(size_t n) {
    std::shared_ptr<Bytes> b = scratch(next_++, n);
    ops_.keep(b);
    return b;
  }

  // Sends message m to process q (in fragments): the head alone once the processes are known to differ.
  void send(int q, const std::shared_ptr<Bytes>& m) {
    const Api& a = state().api;
    const size_t n = agree(head(*m)) ? full_ : kHeadBytes, step = fragment_bytes(n);
    head(*m).bytes = int64_t(n);
    for (size_t at = 0; at < n; at += step)
      check_rc(a.isend(m->data() + at, int(std::min(step, n - at)), q, a.exchange_tag, XJAX_MPI_CONTROL, ops_.post()),
               "MPI_Isend");
  }

  // Process q's next message, once it arrived (each fragment probed first: no receive is ever left
  // posted). One of another size comes from another collective: its head says which, it is marked
  // a mismatch and the rest of it is not read.
  std::shared_ptr<Bytes> receive(int q) {
    std::shared_ptr<Bytes> m = buffer(full_);
    std::memset(m->data(), 0, kHeadBytes);
    const size_t first = receive_fragment(q, m->data(), full_);
    if (first < kHeadBytes || head(*m).bytes != int64_t(full_)) {
      head(*m).mismatch = 1;
      return m;
    }
    const size_t step = fragment_bytes(full_);
    for (size_t at = first; at < full_; at += step)
      if (receive_fragment(q, m->data() + at, full_ - at) != std::min(step, full_ - at)) {
        head(*m).mismatch = 1;
        break;
      }
    return m;
  }

  // The message of lower's and higher's processes (in rank order, so that all get the same bits):
  // the heads merged, the payloads combined while they agree -- into `out` (the results, one per
  // operand) when given: then the message returned is a head alone.
  std::shared_ptr<Bytes> combine(Bytes& lower, Bytes& higher, const std::vector<Tensor>* out = nullptr) {
    std::shared_ptr<Bytes> m = buffer(out ? kHeadBytes : full_);
    Head h;
    for (int k = 0; k < 6; ++k) h.key[k] = std::max(head(lower).key[k], head(higher).key[k]);
    h.mismatch = std::max(head(lower).mismatch, head(higher).mismatch);
    h.bytes = 0;
    head(*m) = h;
    if (!agree(h)) return m;
    for (const Group& g : groups_) {
      size_t at = kHeadBytes + g.offset;
      if (!out) {
        const void* in[2] = {lower.data() + at, higher.data() + at};
        g.combine(in, m->data() + at, int64_t(g.count));
        continue;
      }
      for (size_t i : g.operands) {
        const void* in[2] = {lower.data() + at, higher.data() + at};
        g.combine(in, (*out)[i].data, (*out)[i].size());
        at += size_t((*out)[i].size()) * itemsize(g.dtype);
      }
    }
    return m;
  }

 private:
  // Receives q's next message on the exchange's tag into `to` (room for `room` bytes: a larger one
  // is received in part, through a buffer of its size); returns its size.
  size_t receive_fragment(int q, unsigned char* to, size_t room) {
    const Api& a = state().api;
    int found = 0, source = -1, bytes = 0;
    wait_until([&] {
      check_rc(a.iprobe(q, a.exchange_tag, XJAX_MPI_CONTROL, &found, &source, &bytes), "MPI_Iprobe");
      return found != 0;
    }, desc_, on_timeout_);
    const size_t n = size_t(std::max(bytes, 0));
    if (n <= room) {
      check_rc(a.recv(to, int(n), q, a.exchange_tag, XJAX_MPI_CONTROL), "MPI_Recv");
    } else {
      Bytes whole(n);
      check_rc(a.recv(whole.data(), int(n), q, a.exchange_tag, XJAX_MPI_CONTROL), "MPI_Recv");
      std::memcpy(to, whole.data(), room);
    }
    return n;
  }

  InFlight& ops_;
  const std::vector<Group>& groups_;
  size_t full_;
  const Description& desc_;
  std::function<std::string()> on_timeout_;
  size_t next_ = 0;
};

// Recursive doubling: in round d each process swaps messages with the one whose rank differs in
// bit d and combines the two, log2 P rounds. With P not a power of two the processes past the
// largest power p first hand theirs to the process p below them and get the result back from it.
// Returns the message of all processes; a process that sends it on to no other combines its last
// round straight into `out` (it returns a head alone, and *written is set).
std::shared_ptr<Bytes> exchange(Exchange& x, std::shared_ptr<Bytes> acc, const std::vector<Tensor>& out,
                                bool* written) {
  const Api& a = state().api;
  const int r = a.rank, P = a.size;
  int p = 1;
  while (2 * p <= P) p *= 2;
  *written = false;
  if (r >= p) {
    x.send(r - p, acc);
    return x.receive(r - p);
  }
  if (r + p < P) acc = x.combine(*acc, *x.receive(r + p));
  for (int d = 1; d < p; d *= 2) {
    const int q = r ^ d;
    x.send(q, acc);
    std::shared_ptr<Bytes> theirs = x.receive(q);
    const bool last = 2 * d == p && r + p >= P;
    acc = r < q ? x.combine(*acc, *theirs, last ? &out : nullptr) : x.combine(*theirs, *acc, last ? &out : nullptr);
    *written = last;
  }
  if (r + p < P) x.send(r + p, acc);
  return acc;
}

// After an exchange found that the processes run different collectives (every process finds it):
// they all-gather their signatures, and each names its own collective and the first that differs.
[[noreturn]] void name_mismatch(InFlight& ops, const std::string& sig, const Description& desc) {
  State& s = state();
  const Api& a = s.api;
  auto sigs = std::make_shared<Bytes>(size_t(a.size + 1) * kSigBytes);
  unsigned char* own = sigs->data();
  std::memcpy(own, sig.data(), kSigBytes);
  std::memcpy(own, &s.seq, 8);
  const std::string mismatch = "mismatched collectives across processes: " + where() + " runs collective #" +
                               std::to_string(s.seq) + " " + desc();
  ops.keep(sigs);
  const size_t gather = ops.posted();
  check_rc(a.iallgather(own, own + kSigBytes, int(kSigBytes), XJAX_MPI_CONTROL, ops.post()), "MPI_Iallgather");
  wait(ops, gather, gather + 1, desc, [&] {
    return mismatch + "; the others' descriptions did not arrive within " + seconds(s.timeout) + " s";
  });
  for (int q = 0; q < a.size; ++q) {
    const unsigned char* got = own + size_t(q + 1) * kSigBytes;
    if (q == a.rank || std::memcmp(got, own, kSigHead) == 0) continue;  // the same number, crc32, length
    int64_t their_seq;
    std::memcpy(&their_seq, got, 8);
    fail("mismatch", mismatch + ", process " + std::to_string(q) + " runs collective #" + std::to_string(their_seq) +
                         " " + description(got));
  }
  fail("mismatch", mismatch + ", and another process a different one");
}

void check_ready() {
  State& s = state();
  if (!s.ready)
    throw std::runtime_error("[all_reduce] a collective across processes ran before xjax.distributed.initialize()");
  if (s.broken)
    fail("mpi", "an earlier collective across processes failed on " + where() +
                    " while its messages were in flight: no collective runs after it");
}

// ---- shared rounds: an exchange through the processes' shared memory -----------------------------

// The part [lo, hi) of the payload that one shared round carries.
struct Span {
  size_t lo, hi;
};

// Calls f(i, o, a, b) for each of the group's operands i whose bytes in the payload (from o) meet
// the span, with [a, b) the bytes they share.
template <typename F>
void for_each_part(const Group& g, const std::vector<Tensor>& tensors, Span span, F&& f) {
  size_t o = g.offset;
  for (size_t i : g.operands) {
    const size_t end = o + size_t(tensors[i].size()) * itemsize(g.dtype);
    const size_t a = std::max(o, span.lo), b = std::min(end, span.hi);
    if (a < b) f(i, o, a, b);
    o = end;
  }
}

// Copies the span's bytes of the operands `in` to `to` (the round's message payload).
void pack_span(const std::vector<Group>& groups, const std::vector<Tensor>& in, Span span, unsigned char* to) {
  for (const Group& g : groups)
    for_each_part(g, in, span, [&](size_t i, size_t o, size_t a, size_t b) {
      std::memcpy(to + (a - span.lo), static_cast<const unsigned char*>(in[i].data) + (a - o), b - a);
    });
}

// Combines the processes' round-n copies of the span of group g into its results, pairing them as
// exchange()'s recursive doubling does, so that the bits are those of the MPI path.
void combine_span(const Group& g, const SharedSlots& slots, int64_t n, Span span, const std::vector<Tensor>& out) {
  const size_t item = itemsize(g.dtype);
  const size_t a = std::max(g.offset, span.lo), b = std::min(g.offset + g.count * item, span.hi);
  if (a >= b) return;
  const int P = slots.processes();
  int p = 1;
  while (2 * p <= P) p *= 2;
  const unsigned char* few[8];  // (no allocation for up to 8 processes)
  std::vector<const unsigned char*> many(P > 8 ? size_t(P) : 0);
  const unsigned char** v = P > 8 ? many.data() : few;
  for (int q = 0; q < P; ++q) v[size_t(q)] = slots.payload(q, n) + (a - span.lo);
  std::vector<Bytes> partial(P > 2 ? size_t(p) : 0);  // (two processes pair once, straight into the results)
  auto into_partial = [&](int r, int q) {
    Bytes& to = partial[size_t(r)];
    to.resize(b - a);
    const void* in[2] = {v[size_t(r)], v[size_t(q)]};
    g.combine(in, to.data(), int64_t((b - a) / item));
    v[size_t(r)] = to.data();
  };
  for (int r = 0; r + p < P; ++r) into_partial(r, r + p);
  for (int d = 1; 2 * d < p; d *= 2)
    for (int r = 0; r < p; r += 2 * d) into_partial(r, r + d);
  // the last pair, 0 and p / 2 (0 alone when P is 1), straight into the results
  for_each_part(g, out, Span{a, b}, [&](size_t i, size_t o, size_t x, size_t y) {
    const void* in[2] = {v[0] + (x - a), v[size_t(p / 2)] + (x - a)};
    unsigned char* to = static_cast<unsigned char*>(out[i].data) + (x - o);
    if (p == 1) std::memcpy(to, in[0], y - x);
    else g.combine(in, to, int64_t((y - x) / item));
  });
}

// A shared round's head: the collective's number, the crc32 and length of its description, the
// size of its whole payload.
struct SharedHead {
  int64_t key[3], bytes;
};
static_assert(sizeof(SharedHead) <= SharedSlots::kHeadBytes, "a shared head fits beside the round number");

// One round through the shared segment: every process writes its head `mine` and the span of its
// packed operands, then reads all the others'. The heads must be the same (else the mismatch is
// named, as after an exchange); the spans are combined into `out`.
void shared_round(const SharedHead& mine, const std::vector<Group>& groups, Span span, const std::vector<Tensor>& in,
                  const std::vector<Tensor>& out, const std::string& sig, const Description& desc,
                  const std::function<std::string()>& on_timeout) {
  State& s = state();
  SharedSlots& slots = *s.shared;
  const int64_t n = ++s.round;
  std::memcpy(slots.head(slots.rank(), n), &mine, sizeof mine);
  pack_span(groups, in, span, slots.payload(slots.rank(), n));
  slots.publish(n);
  try {
    wait_until([&] {
      for (int q = 0; q < slots.processes(); ++q)
        if (!slots.published(q, n)) return false;
      return true;
    }, desc, on_timeout);
  } catch (...) {
    s.broken = true;  // the others' rounds may end later: this process's count is out of step
    throw;
  }
  for (int q = 0; q < slots.processes(); ++q)
    if (std::memcmp(slots.head(q, n), &mine, sizeof mine) != 0) {
      InFlight ops(1);
      name_mismatch(ops, sig, desc);
    }
  for (const Group& g : groups) combine_span(g, slots, n, span, out);
}

// The whole exchange through the shared segment: the payload in rounds of a message's room (at
// least one: the check), each head saying the whole payload's size.
void shared_rounds(const SharedHead& mine, const std::vector<Group>& groups, size_t payload, const std::vector<Tensor>& in,
                   const std::vector<Tensor>& out, const std::string& sig, const Description& desc,
                   const std::function<std::string()>& on_timeout) {
  constexpr size_t room = SharedSlots::kPayloadBytes;  // (a multiple of 8: whole elements)
  size_t lo = 0;
  do {
    const size_t hi = std::min(payload, lo + room);
    shared_round(mine, groups, Span{lo, hi}, in, out, sig, desc, on_timeout);
    lo = hi;
  } while (lo < payload);
}

// Runs collective number s.seq with signature `sig`: every process's operands `in` (packed in
// groups) reduced into `out`; with no operands, the check alone (the Python collectives').
void run_exchange(const std::string& sig, const std::vector<Group>& groups, size_t payload,
                  const std::vector<Tensor>& in, const std::vector<Tensor>& out) {
  State& s = state();
  const Api& a = s.api;
  const Description desc(sig);
  auto on_timeout = [&] {
    std::string absent = absent_processes();
    if (absent.empty())
      return "collective #" + std::to_string(s.seq) + " (" + desc() + ") did not complete on " + where() + " within " +
             seconds(s.timeout) + " s, though every process answered that it waits in it";
    return "process(es) [" + absent + "] did not reach collective #" + std::to_string(s.seq) + " (" + desc() +
           ") of " + where() + " within " + seconds(s.timeout) +
           " s: they died, hang, or run a different program (the limit: "
           "xjax.distributed.initialize(collective_timeout=...) or XJAX_COLLECTIVE_TIMEOUT)";
  };
  uint32_t crc, len;
  std::memcpy(&crc, sig.data() + 8, 4);
  std::memcpy(&len, sig.data() + 12, 4);
  const int64_t key[3] = {s.seq, int64_t(crc), int64_t(len)};
  if (s.shared) {
    if (s.shared->processes() != a.size || s.shared->rank() != a.rank)
      fail("mpi", "the shared segment was mapped as process " + std::to_string(s.shared->rank()) + " of " +
                      std::to_string(s.shared->processes()) + ", MPI was installed for " + where() + " of " +
                      std::to_string(a.size));
    return shared_rounds(SharedHead{{key[0], key[1], key[2]}, int64_t(payload)}, groups, payload, in, out, sig, desc,
                         on_timeout);
  }
  Head mine;
  for (int k = 0; k < 3; ++k) mine.key[k] = key[k], mine.key[k + 3] = -key[k];
  mine.mismatch = mine.bytes = 0;
  int rounds = 0;
  while ((1 << rounds) < a.size) ++rounds;
  InFlight ops(size_t(rounds + 2) * fragments(kHeadBytes + payload) + 1);  // a send per round and the fold's, a gather
  Exchange x(ops, groups, payload, desc, on_timeout);
  std::shared_ptr<Bytes> own = x.buffer(x.bytes());
  Head& h = head(*own);
  h = mine;
  for (const Group& g : groups) pack(g, in, own->data() + kHeadBytes + g.offset);
  bool written = false;
  std::shared_ptr<Bytes> all = exchange(x, own, out, &written);
  wait(ops, 0, ops.posted(), desc, [&] { return stopped_during(desc); });
  if (!agree(head(*all))) name_mismatch(ops, sig, desc);
  if (written) return;
  for (const Group& g : groups) unpack(g, all->data() + kHeadBytes + g.offset, out);
}

// ---- large sums: MPI's own all-reduce --------------------------------------------------------------

// Sums of more than kLargeSumBytes go through MPI_Iallreduce after the check alone: Open MPI moves
// large arrays faster so (bench/allreduce.py, 2 processes: 4 MiB 0.68 ms against the exchange's
// 1.7, 16 MiB 2.7 against 7.9; at 1 MiB and below the exchange is the faster). A sum's bits are
// the same either way for two processes (a + b); max and min (NaN propagating, as lax.max) and
// booleans always take the exchange, and so does every all-reduce through shared memory (faster
// still: bench/allreduce.py, 2 processes, one run: 4 MiB 0.63-0.73 ms, mpi4py's Allreduce 1.09).
constexpr size_t kLargeSumBytes = size_t(1) << 20;

int mpi_type(DType dt) {
  switch (dt) {
    case DType::Int8: return XJAX_MPI_INT8;
    case DType::Int16: return XJAX_MPI_INT16;
    case DType::Int32: return XJAX_MPI_INT32;
    case DType::Int64: return XJAX_MPI_INT64;
    case DType::UInt8: return XJAX_MPI_UINT8;
    case DType::UInt16: return XJAX_MPI_UINT16;
    case DType::UInt32: return XJAX_MPI_UINT32;
    case DType::UInt64: return XJAX_MPI_UINT64;
    case DType::Float32: return XJAX_MPI_FLOAT32;
    case DType::Float64: return XJAX_MPI_FLOAT64;
    default: return -1;
  }
}

bool sums_by_mpi(const std::string& reduction, const std::vector<Group>& groups, size_t payload) {
  return reduction == "sum" && payload > kLargeSumBytes &&
         std::all_of(groups.begin(), groups.end(), [](const Group& g) { return mpi_type(g.dtype) >= 0; });
}

// One MPI_Iallreduce per group (the check passed): straight from and into the operands' buffers
// when the executor names them (they are kept alive if the wait gives up), else through staging
// buffers, which are. (MPI_IN_PLACE is avoided: Open MPI's in-place Iallreduce measured 2-5x
// slower from 256 KB.)
void sum_by_mpi(const std::vector<Group>& groups, const std::vector<Tensor>& in, const std::vector<Tensor>& out,
                const Description& desc) {
  const Api& a = state().api;
  InFlight ops(groups.size());
  std::vector<std::shared_ptr<Bytes>> staged(groups.size());
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups[k];
    const size_t item = itemsize(g.dtype);
    const Tensor& x = in[g.operands[0]];
    const Tensor& y = out[g.operands[0]];
    const bool direct = g.operands.size() == 1 && x.owner && y.owner && *x.owner && *y.owner;
    const void* send;
    void* recv;
    if (direct && x.data != y.data) {
      send = x.data;
      ops.pin(x);
    } else {  // packed, the result overwrites its operand (a loop's carried buffer), or staged
      std::shared_ptr<Bytes> packed = scratch(2 * k, g.count * item);
      pack(g, in, packed->data());
      send = packed->data();
      ops.keep(packed);
    }
    if (direct) {
      recv = y.data;
      ops.pin(y);
    } else {
      staged[k] = scratch(2 * k + 1, g.count * item);
      recv = staged[k]->data();
      ops.keep(staged[k]);
    }
    check_rc(a.iallreduce(send, recv, int(g.count), mpi_type(g.dtype), XJAX_MPI_SUM, XJAX_MPI_DATA, ops.post()),
             "MPI_Iallreduce");
  }
  wait(ops, 0, groups.size(), desc, [&] { return stopped_during(desc); });
  for (size_t k = 0; k < groups.size(); ++k)
    if (staged[k]) unpack(groups[k], staged[k]->data(), out);
}

// The op that combines two operands of dtype dt: booleans or for sum and max, and for min.
OpId combine_op(int reduction, DType dt) {
  return reduction == 0 ? (dt == DType::Bool ? OpId::max_ : OpId::add_) : (reduction == 1 ? OpId::max_ : OpId::min_);
}

// Its loop, looked up once for every reduction and dtype (a lookup per call cost 2.5% of a 1 KB
// all-reduce); where there is none the lookup runs again, to say so as it does.
ElementwiseLoop combine_loop(const std::string& reduction, DType dt) {
  static const auto loops = [] {
    std::array<std::array<ElementwiseLoop, kNumDTypes>, 3> t{};
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < kNumDTypes; ++k) try {
          t[size_t(r)][size_t(k)] = elementwise_loop(combine_op(r, DType(k)), {DType(k), DType(k)}, DType(k), Attrs{});
        } catch (const std::exception&) {
        }
    return t;
  }();
  const int r = reduction == "sum" ? 0 : (reduction == "max" ? 1 : 2);
  if (ElementwiseLoop f = loops[size_t(r)][size_t(dt)]) return f;
  return elementwise_loop(combine_op(r, dt), {dt, dt}, dt, Attrs{});
}

// The operands' groups, one per dtype in the order of their first operands. They are built in the
// thread's kept vector, so that a repeated collective reuses its memory (allocating and freeing
// them was about 4% of a 1 KiB pmap(psum) between two processes); no collective runs inside
// another on one thread.
std::vector<Group>& group_operands(const std::vector<Tensor>& in, const std::string& reduction) {
  thread_local std::vector<Group> groups;
  size_t used = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    size_t k = 0;
    while (k < used && groups[k].dtype != in[i].dtype) ++k;
    if (k == used) {
      if (used == groups.size()) groups.emplace_back();
      Group& g = groups[used++];
      g.dtype = in[i].dtype;
      g.combine = combine_loop(reduction, in[i].dtype);
      g.operands.clear();
      g.count = g.offset = 0;
    }
    groups[k].operands.push_back(i);
    groups[k].count += size_t(in[i].size());
  }
  groups.resize(used);
  return groups;
}

// all_reduce(x, ...) -> (y, ...): every operand reduced over all processes, as one exchange.
void all_reduce_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  check_ready();
  State& s = state();
  const std::string& reduction = attrs.get_str("reduction");
  ++s.seq;
  std::vector<Group>& groups = group_operands(in, reduction);
  size_t payload = 0;
  for (Group& g : groups) {
    if (!g.combine) fail("mpi", "[all_reduce] cannot reduce " + std::string(dtype_name(g.dtype)));
    g.offset = payload;
    payload += (g.count * itemsize(g.dtype) + 7) / 8 * 8;
  }
  if (payload > size_t(INT_MAX) - kHeadBytes) fail("mpi", "more than 2 GiB in one exchange");
  const std::string& sig = attrs.get_str("signature");
  if (s.shared || !sums_by_mpi(reduction, groups, payload)) return run_exchange(sig, groups, payload, in, out);
  run_exchange(sig, {}, 0, {}, {});  // the check alone
  sum_by_mpi(groups, in, out, Description(sig));
}

std::vector<TypeInfo> infer_all_reduce(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::all_reduce_;
  const std::string& r = str_attr(op, attrs, "reduction");
  if (r != "sum" && r != "max" && r != "min") fail_value(op, "reduction must be 'sum', 'max' or 'min', got '" + r + "'");
  if (str_attr(op, attrs, "signature").size() != kSigBytes)
    fail_value(op, "needs a 'signature' attribute of " + std::to_string(kSigBytes) + " bytes");
  if (in.empty()) fail_value(op, "needs at least one operand");
  for (const TypeInfo& t : in)
    if (t.dtype == DType::Float16 || t.dtype == DType::BFloat16)
      fail_type(op, std::string("MPI cannot reduce ") + dtype_name(t.dtype) + ": reduce it as float32 (" +
                        types_str(in) + ")");
  return in;
}

}  // namespace

void install(const Api& api) {
  if (!api.iallreduce || !api.iallgather || !api.isend || !api.iprobe || !api.recv || !api.test)
    throw std::invalid_argument("[mpi_install] a function of the MPI shim is missing");
  State& s = state();
  s.api = api;
  s.ready = true;
  s.broken = false;  // (what an earlier installation abandoned stays kept; these are new communicators)
  s.fail_kind.clear();
}

void clear() { state().ready = false; }

void share(const std::string& name, int processes, int rank) {
  State& s = state();
  s.shared = std::make_unique<SharedSlots>(name, processes, rank);
  s.round = 0;
}

void unshare() { state().shared.reset(); }

bool sharing() { return state().shared != nullptr; }

bool installed() { return state().ready; }

void begin(int64_t seq, double timeout_s, int64_t exited_after) {
  State& s = state();
  s.seq = seq;
  s.timeout = timeout_s;
  s.exited_after = exited_after;
  s.fail_kind.clear();
  s.fail_msg.clear();
}

int64_t seq() { return state().seq; }

void check(const std::string& signature) {
  if (signature.size() != kSigBytes)
    throw std::invalid_argument("[mpi_check] a signature has " + std::to_string(kSigBytes) + " bytes, got " +
                                std::to_string(signature.size()));
  check_ready();
  run_exchange(signature, {}, 0, {}, {});
}

std::pair<std::string, std::string> take_failure() {
  State& s = state();
  std::pair<std::string, std::string> f{s.fail_kind, s.fail_msg};
  s.fail_kind.clear();
  s.fail_msg.clear();
  return f;
}

size_t abandoned() {
  std::lock_guard<std::mutex> lock(abandoned_mutex);
  return abandoned_list().size();
}

const char* shim_source() { return kMpiShimText; }

}  // namespace xjax::mpi

namespace xjax {

void register_collective_ops(OpTable& t) { t.set_infer(OpId::all_reduce_, mpi::infer_all_reduce); }

void register_collective_cpu(CpuKernelTable& t) { t.set_cpu(OpId::all_reduce_, mpi::all_reduce_kernel); }

}  // namespace xjax
