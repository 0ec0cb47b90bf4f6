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
#include "core/cpu/kernels.h"
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
  bool broken = false;  // operations of a failed collective are still in flight: no collective runs after it
  int64_t seq = 0, exited_after = INT64_MAX;
  bool check = true;
  double timeout = 300;
  std::string fail_kind, fail_msg;
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

// Polls until every operation is done. Meanwhile it answers roll calls, and a notice from another
// process (it failed or exited), or one known to have exited before this collective, ends the
// wait unless the operations finish within kNoticeGraceSeconds (a notice that does not concern
// this collective stays queued for the next); so does the timeout, with on_timeout()'s message
// (or the notice's, when one came: it says why the others stopped).
// Ended so, `ops` keeps its memory alive. It waits for the operations [from, to) of `ops`.
void wait(InFlight& ops, size_t from, size_t to, const std::string& desc, const std::function<std::string()>& on_timeout) {
  State& s = state();
  const Api& a = s.api;
  const Clock::time_point start = Clock::now();
  Clock::time_point noticed;
  bool notice = false;
  for (int64_t polls = 1;; ++polls) {
    ops.test(a, from, to);
    if (ops.done(from, to)) return;
    if (polls % 64) continue;
    answer_roll_calls();
    int pending = 0, source = -1, bytes = 0;
    if (!notice) check_rc(a.iprobe(-1, a.notice_tag, XJAX_MPI_CONTROL, &pending, &source, &bytes), "MPI_Iprobe");
    if (!notice && (pending || s.exited_after < s.seq)) {
      notice = true;
      noticed = Clock::now();
    }
    double elapsed = since(start);
    if (notice && (since(noticed) > kNoticeGraceSeconds || elapsed > s.timeout)) fail("notice", desc);
    if (elapsed > s.timeout) fail("timeout", on_timeout());
    if (elapsed > kSpinSeconds)
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.001, elapsed / 100)));
  }
}

// Step 1: every process must run the same collective. One all-reduce (MAX) of (number, crc32,
// length) and their negations: the same everywhere iff each maximum equals the minimum. Posted
// first in `ops` (operation 0), before the data's operations: the two travel together, so a
// checked collective costs one round trip. Returns where the maxima land.
const int64_t* post_check(InFlight& ops, const std::string& sig) {
  State& s = state();
  uint32_t crc, len;
  std::memcpy(&crc, sig.data() + 8, 4);
  std::memcpy(&len, sig.data() + 12, 4);
  auto values = std::make_shared<std::array<int64_t, 12>>();
  int64_t* mine = values->data();
  const int64_t key[3] = {s.seq, int64_t(crc), int64_t(len)};
  for (int k = 0; k < 3; ++k) mine[k] = key[k], mine[k + 3] = -key[k];
  ops.keep(values);
  check_rc(s.api.iallreduce(mine, mine + 6, 6, XJAX_MPI_INT64, XJAX_MPI_MAX, XJAX_MPI_CONTROL, ops.post()),
           "MPI_Iallreduce");
  return mine + 6;
}

// Waits for the check (operation 0 of `ops`). On a mismatch (every process learns it at once) the
// signatures are all-gathered to name it; the data's operations, posted on the assumption that the
// collectives match, are then abandoned with `ops` (an erroneous exchange MPI may never finish).
void finish_check(InFlight& ops, const int64_t* all, const std::string& sig, const std::string& desc) {
  State& s = state();
  const Api& a = s.api;
  wait(ops, 0, 1, desc, [&] {
    std::string absent = absent_processes();
    if (absent.empty())
      return "collective #" + std::to_string(s.seq) + " (" + desc + ") did not start on " + where() + " within " +
             seconds(s.timeout) + " s, though every process answered that it waits in it";
    return "process(es) [" + absent + "] did not reach collective #" + std::to_string(s.seq) + " (" + desc +
           ") of " + where() + " within " + seconds(s.timeout) +
           " s: they died, hang, or run a different program (the limit: "
           "xjax.distributed.initialize(collective_timeout=...) or XJAX_COLLECTIVE_TIMEOUT)";
  });
  if (all[0] == -all[3] && all[1] == -all[4] && all[2] == -all[5]) return;
  // The failure path: every process's signature, to name the difference.
  auto sigs = std::make_shared<Bytes>(size_t(a.size + 1) * kSigBytes);
  unsigned char* own = sigs->data();
  std::memcpy(own, sig.data(), kSigBytes);
  std::memcpy(own, &s.seq, 8);
  const std::string mismatch = "mismatched collectives across processes: " + where() + " runs collective #" +
                               std::to_string(s.seq) + " " + desc;
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

int mpi_type(DType dt) {
  switch (dt) {
    case DType::Bool: return XJAX_MPI_BOOL;
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

int reduce_op(const std::string& reduction, DType dt) {
  bool b = dt == DType::Bool;  // booleans: or for sum and max, and for min
  if (reduction == "sum" || reduction == "max")
    return b ? XJAX_MPI_LOR : (reduction == "sum" ? XJAX_MPI_SUM : XJAX_MPI_MAX);
  return b ? XJAX_MPI_LAND : XJAX_MPI_MIN;
}

// all_reduce(x, ...) -> (y, ...): every operand reduced over all processes, as one exchange.
void all_reduce_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  State& s = state();
  if (!s.ready)
    throw std::runtime_error("[all_reduce] a collective across processes ran before xjax.distributed.initialize()");
  if (s.broken)
    fail("mpi", "an earlier collective across processes failed on " + where() +
                    " and left MPI operations in flight: no collective runs after it");
  const Api& a = s.api;
  const std::string& sig = attrs.get_str("signature");
  const std::string& reduction = attrs.get_str("reduction");
  std::string desc = description(reinterpret_cast<const unsigned char*>(sig.data()));
  ++s.seq;
  // Step 2: one Iallreduce per dtype; several operands of one dtype go packed in one buffer.
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < in.size(); ++i) {
    bool placed = false;
    for (auto& g : groups)
      if (in[g[0]].dtype == in[i].dtype) g.push_back(i), placed = true;
    if (!placed) groups.push_back({i});
  }
  std::vector<size_t> counts(groups.size());
  for (size_t k = 0; k < groups.size(); ++k) {
    for (size_t i : groups[k]) counts[k] += size_t(in[i].size());
    if (counts[k] > size_t(INT_MAX)) fail("mpi", desc + ": more than 2^31 - 1 elements of one dtype in one exchange");
    if (mpi_type(in[groups[k][0]].dtype) < 0)
      fail("mpi", desc + ": MPI has no datatype for " + dtype_name(in[groups[k][0]].dtype));
  }
  // A lone operand goes straight from and into its buffers when the executor names them (they are
  // kept alive if the wait gives up); otherwise through staging buffers, which are. (MPI_IN_PLACE
  // is avoided: Open MPI's in-place Iallreduce measured 2-5x slower from 256 KB.)
  const bool check = s.check && a.size > 1;
  InFlight ops(groups.size() + (check ? 2 : 0));  // the check, the data, a mismatch's gather
  const int64_t* checked = check ? post_check(ops, sig) : nullptr;
  const size_t data = ops.posted();
  std::vector<std::shared_ptr<Bytes>> staged(groups.size());  // where a group's results land, if not in place
  for (size_t k = 0; k < groups.size(); ++k) {
    const auto& g = groups[k];
    const DType dt = in[g[0]].dtype;
    const size_t item = itemsize(dt), count = counts[k];
    const int type = mpi_type(dt);
    const Tensor& x = in[g[0]];
    const Tensor& y = out[g[0]];
    const bool direct = g.size() == 1 && x.owner && y.owner && *x.owner && *y.owner;
    const void* send;
    void* recv;
    if (direct && x.data != y.data) {
      send = x.data;
      ops.pin(x);
    } else {  // packed, the result overwrites its operand (a loop's carried buffer), or staged
      std::shared_ptr<Bytes> pack = scratch(2 * k, count * item);
      size_t at = 0;
      for (size_t i : g) {
        size_t n = size_t(in[i].size()) * item;
        if (n) std::memcpy(pack->data() + at, in[i].data, n);
        at += n;
      }
      send = pack->data();
      ops.keep(pack);
    }
    if (direct) {
      recv = y.data;
      ops.pin(y);
    } else {
      staged[k] = scratch(2 * k + 1, count * item);
      recv = staged[k]->data();
      ops.keep(staged[k]);
    }
    check_rc(a.iallreduce(send, recv, int(count), type, reduce_op(reduction, dt), XJAX_MPI_DATA, ops.post()),
             "MPI_Iallreduce");
  }
  if (check) finish_check(ops, checked, sig, desc);
  wait(ops, data, data + groups.size(), desc, [&] {
    return "collective #" + std::to_string(s.seq) + " (" + desc + ") did not complete on " + where() + " within " +
           seconds(s.timeout) + " s: a process died or stopped during it";
  });
  for (size_t k = 0; k < groups.size(); ++k) {
    if (!staged[k]) continue;
    size_t at = 0, item = itemsize(in[groups[k][0]].dtype);
    for (size_t i : groups[k]) {
      size_t n = size_t(in[i].size()) * item;
      if (n) std::memcpy(out[i].data, staged[k]->data() + at, n);
      at += n;
    }
  }
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

bool installed() { return state().ready; }

void begin(int64_t seq, bool check, double timeout_s, int64_t exited_after) {
  State& s = state();
  s.seq = seq;
  s.check = check;
  s.timeout = timeout_s;
  s.exited_after = exited_after;
  s.fail_kind.clear();
  s.fail_msg.clear();
}

int64_t seq() { return state().seq; }

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
