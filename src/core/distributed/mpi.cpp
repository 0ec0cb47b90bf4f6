// The all_reduce op across processes, over the MPI functions the host installed (mpi.h).
#include "core/distributed/mpi.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "core/ops/ops.h"

namespace xjax::mpi {
namespace {

constexpr size_t kSigBytes = 256;  // the signature: <seq int64, crc32 uint32, length uint32, text>
constexpr size_t kSigHead = 16;
constexpr double kSpinSeconds = 0.002;  // poll without sleeping this long (the others are usually there)

struct State {
  Api api;
  bool ready = false;
  int64_t seq = 0, exited_after = INT64_MAX;
  bool check = true;
  double timeout = 300;
  std::string fail_kind, fail_msg;
};

State& state() {
  static State s;
  return s;
}

// Storage for an MPI_Request (a pointer or an int) or an MPI_Status (at most a few ints).
struct Request {
  alignas(8) unsigned char bytes[16] = {};
};
struct Status {
  alignas(8) unsigned char bytes[256];
};

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

std::string where() { return "process " + std::to_string(state().api.rank); }

// The description in a signature, as the host's _decode shows it.
std::string description(const unsigned char* sig) {
  uint32_t len;
  std::memcpy(&len, sig + 12, 4);
  size_t shown = std::min<size_t>(len, kSigBytes - kSigHead);
  std::string text(reinterpret_cast<const char*>(sig) + kSigHead, shown);
  return shown < len ? text + "..." : text;
}

// Polls until every request is done (done[i] set as each completes). Meanwhile a notice from
// another process (it failed or exited), or one known to have exited before this collective, ends
// the wait; so does the timeout, with on_timeout()'s message.
void wait(std::vector<Request>& reqs, std::vector<char>& done, const std::string& desc,
          const std::function<std::string()>& on_timeout) {
  State& s = state();
  const Api& a = s.api;
  Status status;
  size_t left = 0;
  for (char d : done) left += !d;
  auto start = std::chrono::steady_clock::now();
  for (int64_t polls = 1;; ++polls) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (done[i]) continue;
      int flag = 0;
      check_rc(a.Test(reqs[i].bytes, &flag, status.bytes), "MPI_Test");
      if (flag) done[i] = 1, --left;
    }
    if (!left) return;
    if (polls % 64) continue;
    int pending = 0;
    check_rc(a.Iprobe(a.any_source, a.notice_tag, a.control, &pending, status.bytes), "MPI_Iprobe");
    if (pending || s.exited_after < s.seq) fail("notice", desc);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > s.timeout) fail("timeout", on_timeout());
    if (elapsed > kSpinSeconds)
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.001, elapsed / 100)));
  }
}

// Step 1: every process sends every other one its signature; all must be the same.
void exchange_signatures(const std::string& sig, const std::string& desc) {
  State& s = state();
  const Api& a = s.api;
  std::vector<int> peers;
  for (int q = 0; q < a.size; ++q)
    if (q != a.rank) peers.push_back(q);
  std::vector<unsigned char> mine(sig.begin(), sig.end());
  std::memcpy(mine.data(), &s.seq, 8);
  std::vector<unsigned char> theirs(peers.size() * kSigBytes);
  std::vector<Request> reqs(2 * peers.size());
  std::vector<char> done(reqs.size(), 0);
  for (size_t k = 0; k < peers.size(); ++k)
    check_rc(a.Irecv(theirs.data() + k * kSigBytes, int(kSigBytes), a.byte_type, peers[k], a.sig_tag, a.control,
                     reqs[k].bytes), "MPI_Irecv");
  for (size_t k = 0; k < peers.size(); ++k)
    check_rc(a.Isend(mine.data(), int(kSigBytes), a.byte_type, peers[k], a.sig_tag, a.control,
                     reqs[peers.size() + k].bytes), "MPI_Isend");
  wait(reqs, done, desc, [&] {
    std::string absent;
    for (size_t k = 0; k < peers.size(); ++k)
      if (!done[k]) absent += (absent.empty() ? "" : ", ") + std::to_string(peers[k]);
    return "process(es) [" + absent + "] did not reach collective #" + std::to_string(s.seq) + " (" + desc + ") of " +
           where() + " within " + seconds(s.timeout) + " s: they died, hang, or run a different program (the limit: "
           "xjax.distributed.initialize(collective_timeout=...) or XJAX_COLLECTIVE_TIMEOUT)";
  });
  for (size_t k = 0; k < peers.size(); ++k) {
    const unsigned char* got = theirs.data() + k * kSigBytes;
    if (std::memcmp(got, mine.data(), 12) == 0) continue;  // the same number and crc32
    int64_t their_seq;
    std::memcpy(&their_seq, got, 8);
    fail("mismatch", "mismatched collectives across processes: " + where() + " runs collective #" +
                         std::to_string(s.seq) + " " + desc + ", process " + std::to_string(peers[k]) +
                         " runs collective #" + std::to_string(their_seq) + " " + description(got));
  }
}

Handle reduce_op(const Api& a, const std::string& reduction, DType dt) {
  bool b = dt == DType::Bool;  // booleans: or for sum and max, and for min
  if (reduction == "sum" || reduction == "max") return b ? a.lor : (reduction == "sum" ? a.sum : a.max);
  return b ? a.land : a.min;
}

// all_reduce(x, ...) -> (y, ...): every operand reduced over all processes, as one exchange.
void all_reduce_kernel(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  State& s = state();
  if (!s.ready)
    throw std::runtime_error("[all_reduce] a collective across processes ran before xjax.distributed.initialize()");
  const Api& a = s.api;
  const std::string& sig = attrs.get_str("signature");
  const std::string& reduction = attrs.get_str("reduction");
  std::string desc = description(reinterpret_cast<const unsigned char*>(sig.data()));
  ++s.seq;
  if (s.check && a.size > 1) exchange_signatures(sig, desc);
  // Step 2: one Iallreduce per dtype; several operands of one dtype go packed in one buffer.
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < in.size(); ++i) {
    bool placed = false;
    for (auto& g : groups)
      if (in[g[0]].dtype == in[i].dtype) g.push_back(i), placed = true;
    if (!placed) groups.push_back({i});
  }
  // Packing buffers, kept between runs (a fresh large buffer per run costs its page faults).
  // (MPI_IN_PLACE is avoided: Open MPI's in-place Iallreduce measured 2-5x slower from 256 KB.)
  thread_local std::vector<std::vector<unsigned char>> scratch;
  if (scratch.size() < 2 * groups.size()) scratch.resize(2 * groups.size());
  auto buffer = [&](size_t j, size_t nbytes) {
    if (scratch[j].size() < nbytes) scratch[j].resize(nbytes);
    return scratch[j].data();
  };
  std::vector<char> packed(groups.size(), 0);
  std::vector<Request> reqs(groups.size());
  for (size_t k = 0; k < groups.size(); ++k) {
    const auto& g = groups[k];
    DType dt = in[g[0]].dtype;
    size_t item = itemsize(dt), count = 0;
    for (size_t i : g) count += size_t(in[i].size());
    if (count > size_t(INT_MAX)) fail("mpi", desc + ": more than 2^31 - 1 elements of one dtype in one exchange");
    const void* send = in[g[0]].data;
    void* recv = out[g[0]].data;
    if (g.size() > 1) {  // packed into one buffer
      unsigned char* pack = buffer(2 * k, count * item);
      size_t at = 0;
      for (size_t i : g) {
        size_t n = size_t(in[i].size()) * item;
        if (n) std::memcpy(pack + at, in[i].data, n);
        at += n;
      }
      send = pack;
      recv = buffer(2 * k + 1, count * item);
      packed[k] = 1;
    } else if (send == recv) {  // the result overwrites its operand (a loop's carried buffer)
      unsigned char* copy = buffer(2 * k, count * item);
      if (count) std::memcpy(copy, send, count * item);
      send = copy;
    }
    check_rc(a.Iallreduce(send, recv, int(count), a.types[int(dt)], reduce_op(a, reduction, dt), a.data,
                          reqs[k].bytes), "MPI_Iallreduce");
  }
  std::vector<char> done(reqs.size(), 0);
  wait(reqs, done, desc, [&] {
    return "collective #" + std::to_string(s.seq) + " (" + desc + ") did not complete on " + where() + " within " +
           seconds(s.timeout) + " s: a process died or stopped during it";
  });
  for (size_t k = 0; k < groups.size(); ++k) {
    if (!packed[k]) continue;
    size_t at = 0, item = itemsize(in[groups[k][0]].dtype);
    for (size_t i : groups[k]) {
      size_t n = size_t(in[i].size()) * item;
      if (n) std::memcpy(out[i].data, scratch[2 * k + 1].data() + at, n);
      at += n;
    }
  }
}

std::vector<TypeInfo> infer_all_reduce(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpId op = OpId::all_reduce_;
  if (!attrs.has("reduction") || !std::holds_alternative<std::string>(attrs.items().at("reduction")))
    fail_value(op, "needs a 'reduction' attribute: 'sum', 'max' or 'min'");
  const std::string& r = attrs.get_str("reduction");
  if (r != "sum" && r != "max" && r != "min") fail_value(op, "reduction must be 'sum', 'max' or 'min', got '" + r + "'");
  if (!attrs.has("signature") || !std::holds_alternative<std::string>(attrs.items().at("signature")) ||
      attrs.get_str("signature").size() != kSigBytes)
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
  State& s = state();
  s.api = api;
  s.ready = true;
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

}  // namespace xjax::mpi

namespace xjax {

void register_collective_ops(OpTable& t) {
  t.set_infer(OpId::all_reduce_, mpi::infer_all_reduce);
  t.set_cpu(OpId::all_reduce_, mpi::all_reduce_kernel);
}

}  // namespace xjax
