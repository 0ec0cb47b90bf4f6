// The all_reduce op across processes (src/core/distributed/mpi.cpp) over a fake MPI shim: no MPI
// needed. The fake plays the other processes of an exchange: their messages come at once, or
// never; they answer roll calls, post notices, run another collective. The failure paths matter
// most: a send still in flight when a wait gives up (a timeout, a notice, a mismatch) may be
// received by a late process after the op returned, reading its buffer. The fake does exactly that
// once the test has dropped every buffer it owns, so the AddressSanitizer build (.ci/sanitizers)
// fails on a use after free unless the core kept that memory alive.
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "core/array.h"
#include "core/buffer.h"
#include "core/compiler/executable.h"
#include "core/cpu/kernels.h"
#include "core/distributed/mpi.h"
#include "core/graph.h"
#include "core/ops/ops.h"

using namespace xjax;

namespace fake {

enum class Kind { Allreduce, Allgather, Send };

constexpr int kExchangeTag = 5;
constexpr size_t kHead = 64;  // an exchange message's head: 6 int64 keys, a mismatch flag, its size

struct Op {
  Kind kind;
  const void* send;
  void* recv;
  int bytes;
  int comm, dest, tag;
  bool complete = false;
};

// What the other processes do.
struct World {
  int rank = 0, size = 2;
  bool peers_arrive = true;    // the others' exchange messages come at once, and take this one's
  bool gather_arrives = true;  // the mismatch's all-gather completes at once
  bool sums_arrive = true;     // a large sum's all-reduces complete at once
  std::string peer_signature;  // the others' collective (their messages' heads), its number skewed by
  int64_t skew = 0;
  std::vector<unsigned char> peer_payload;  // what each of the others sends after the head
  std::map<int, int64_t> received;          // per process, the collective of its last message received
  bool notice = false;         // a notice waits on the control communicator
  std::vector<int> answering;  // the processes that answer roll calls
  std::string other_signature; // what the others contribute to a gather (256 bytes)
  std::vector<Op> ops;         // every operation posted, this case's from `first` on (the core's
  size_t first = 0;            // small sends outlive a case: their requests stay valid)
  std::vector<std::pair<int, int64_t>> inbox_answers;  // answers waiting to be received: (source, seq)
  std::vector<int> roll_calls_to;  // the processes a roll call went to
  int roll_call_from = -1;         // a process whose roll call waits to be answered
  std::vector<std::pair<int, int64_t>> answers_sent;  // (to, collective number)
};
World w;

int64_t id_of(const xjax_mpi_request* r) {
  int64_t id;
  std::memcpy(&id, r, sizeof id);
  return id;
}

xjax_mpi_request* record(Op op, xjax_mpi_request* r) {
  w.ops.push_back(op);
  int64_t id = int64_t(w.ops.size());
  std::memset(r, 0, sizeof *r);
  std::memcpy(r, &id, sizeof id);
  return r;
}

// Completes one operation as the other processes would: reads what it sends, writes what it receives.
void perform(Op& o) {
  if (o.complete) return;
  o.complete = true;
  if (o.kind == Kind::Send) {
    volatile unsigned char sink = 0;
    for (int i = 0; i < o.bytes; ++i) sink ^= static_cast<const unsigned char*>(o.send)[i];
    (void)sink;
    return;
  }
  if (o.kind == Kind::Allreduce) {  // a float32 sum, each process contributing the same
    for (int i = 0; i < o.bytes / 4; ++i)
      static_cast<float*>(o.recv)[i] = static_cast<const float*>(o.send)[i] * float(w.size);
    return;
  }
  auto* out = static_cast<unsigned char*>(o.recv);
  for (int q = 0; q < w.size; ++q) {
    if (q == w.rank) std::memcpy(out + size_t(q) * size_t(o.bytes), o.send, size_t(o.bytes));
    else std::memcpy(out + size_t(q) * size_t(o.bytes), w.other_signature.data(), size_t(o.bytes));
  }
}

// The i-th operation of this case.
Op& nth(size_t i) { return w.ops.at(w.first + i); }
size_t posted() { return w.ops.size() - w.first; }
size_t sends_to(int q) {
  size_t n = 0;
  for (size_t i = w.first; i < w.ops.size(); ++i) n += w.ops[i].tag == kExchangeTag && w.ops[i].dest == q;
  return n;
}

// The late processes arrive: every operation still in flight completes now.
void arrive_late() {
  for (Op& o : w.ops) perform(o);
}

size_t in_flight() {  // this case's operations still in flight
  size_t n = 0;
  for (size_t i = w.first; i < w.ops.size(); ++i) n += !w.ops[i].complete;
  return n;
}

// Process q's exchange message for the current collective: its head, then its payload.
std::vector<unsigned char> message_of(int q) {
  (void)q;
  std::vector<unsigned char> m(kHead + w.peer_payload.size(), 0);
  int64_t key[8] = {mpi::seq() + w.skew, 0, 0, 0, 0, 0, 0, 0};
  uint32_t crc, len;
  std::memcpy(&crc, &w.peer_signature[8], 4);
  std::memcpy(&len, &w.peer_signature[12], 4);
  key[1] = crc, key[2] = len;
  for (int k = 0; k < 3; ++k) key[k + 3] = -key[k];
  key[7] = int64_t(m.size());
  std::memcpy(m.data(), key, sizeof key);
  if (!w.peer_payload.empty()) std::memcpy(m.data() + kHead, w.peer_payload.data(), w.peer_payload.size());
  return m;
}

bool has_message(int q) {
  auto it = w.received.find(q);
  return w.peers_arrive && (it == w.received.end() || it->second < mpi::seq());
}

// C linkage, as the shim's functions have (the types in mpi_shim.h), under names of their own.
extern "C" {
int fake_iallreduce(const void* send, void* recv, int count, int type, int op, int comm, xjax_mpi_request* r) {
  if (type != XJAX_MPI_FLOAT32 || op != XJAX_MPI_SUM || comm != XJAX_MPI_DATA)
    throw std::logic_error("the fake sums float32 on the data communicator only");
  record(Op{Kind::Allreduce, send, recv, count * 4, comm, -1, -1}, r);
  if (w.sums_arrive) perform(w.ops.back());
  return 0;
}

int fake_iallgather(const void* send, void* recv, int bytes, int comm, xjax_mpi_request* r) {
  record(Op{Kind::Allgather, send, recv, bytes, comm, -1, -1}, r);
  if (w.gather_arrives) perform(w.ops.back());
  return 0;
}

int fake_isend(const void* buf, int bytes, int dest, int tag, int comm, xjax_mpi_request* r) {
  record(Op{Kind::Send, buf, nullptr, bytes, comm, dest, tag}, r);
  if (tag == 3) {  // a roll call: the processes that answer do
    int64_t seq;
    std::memcpy(&seq, buf, sizeof seq);
    w.roll_calls_to.push_back(dest);
    for (int q : w.answering)
      if (q == dest) w.inbox_answers.push_back({q, seq});
  }
  if (tag == 4) {  // an answer to a roll call
    int64_t seq;
    std::memcpy(&seq, buf, sizeof seq);
    w.answers_sent.push_back({dest, seq});
  }
  if (tag == kExchangeTag && w.peers_arrive) perform(w.ops.back());
  return 0;  // (other sends complete only when the late processes arrive: their bytes must stay alive)
}

int fake_iprobe(int source, int tag, int comm, int* found, int* found_source, int* found_bytes) {
  (void)comm;
  *found = 0;
  if (tag == 2 && w.notice) *found = 1, *found_source = 1, *found_bytes = 40;
  if (tag == 4 && !w.inbox_answers.empty()) *found = 1, *found_source = w.inbox_answers.front().first, *found_bytes = 8;
  if (tag == 3 && w.roll_call_from >= 0) *found = 1, *found_source = w.roll_call_from, *found_bytes = 8;
  if (tag == kExchangeTag && source >= 0 && has_message(source))
    *found = 1, *found_source = source, *found_bytes = int(kHead + w.peer_payload.size());
  return 0;
}

int fake_recv(void* buf, int bytes, int source, int tag, int comm) {
  (void)comm;
  if (tag == 3 && source == w.roll_call_from && bytes == 8) {
    int64_t theirs = 7;
    std::memcpy(buf, &theirs, 8);
    w.roll_call_from = -1;
    return 0;
  }
  if (tag == kExchangeTag && has_message(source)) {
    std::vector<unsigned char> m = message_of(source);
    if (size_t(bytes) != m.size()) throw std::logic_error("the fake's message was probed at another size");
    std::memcpy(buf, m.data(), m.size());
    w.received[source] = mpi::seq();
    return 0;
  }
  if (tag != 4 || w.inbox_answers.empty() || w.inbox_answers.front().first != source || bytes != 8)
    throw std::logic_error("the fake receives only the messages it announced");
  std::memcpy(buf, &w.inbox_answers.front().second, 8);
  w.inbox_answers.erase(w.inbox_answers.begin());
  return 0;
}

int fake_test(xjax_mpi_request* r, int* done) {
  int64_t id = id_of(r);
  if (id < 1 || id > int64_t(w.ops.size())) throw std::logic_error("the fake's request is unknown");
  *done = w.ops[size_t(id - 1)].complete;
  return 0;
}
}  // extern "C"

// A fresh world of `size` processes, this one rank 0, the core's MPI installed over it; the
// others run collective `peer_signature` and send `payload`.
void reset(const std::string& peer_signature, std::vector<unsigned char> payload, int size = 2) {
  arrive_late();  // (what an earlier case left in flight reads memory the core kept)
  std::vector<Op> ops = std::move(w.ops);
  w = World{};
  w.ops = std::move(ops);
  w.first = w.ops.size();
  w.size = size;
  w.peer_signature = peer_signature;
  w.peer_payload = std::move(payload);
  mpi::Api a;
  a.iallreduce = fake_iallreduce;
  a.iallgather = fake_iallgather;
  a.isend = fake_isend;
  a.iprobe = fake_iprobe;
  a.recv = fake_recv;
  a.test = fake_test;
  a.rank = 0, a.size = size;
  mpi::install(a);
  mpi::begin(0, 0.05, INT64_MAX);
}

}  // namespace fake

namespace {

std::string signature(const std::string& desc) {
  std::string sig(256, '\0');
  uint32_t crc = uint32_t(std::hash<std::string>()(desc)), len = uint32_t(desc.size());
  std::memcpy(&sig[8], &crc, 4);
  std::memcpy(&sig[12], &len, 4);
  std::memcpy(&sig[16], desc.data(), desc.size());
  return sig;
}

Attrs attrs(const std::string& desc = "psum(axis_name=('i',)) of float32[5]") {
  Attrs a;
  a.set("reduction", std::string("sum"));
  a.set("signature", signature(desc));
  return a;
}

CpuKernel kernel() { return cpu_kernel(OpId::all_reduce_); }

// Runs the kernel over `in` -> `out`; the message of its error ("" when none).
std::string run(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& a = attrs()) {
  try {
    kernel()(in, out, a);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

bool contains(const std::string& text, const std::string& part) {
  bool ok = text.find(part) != std::string::npos;
  if (!ok) std::printf("  expected %s\n  in %s\n", part.c_str(), text.c_str());
  return ok;
}

const std::string kPsum5 = "psum(axis_name=('i',)) of float32[5]";

// A payload of float32 values (then int32 ones), as an exchange packs them (8-byte aligned).
std::vector<unsigned char> payload(const std::vector<float>& f, const std::vector<int32_t>& i = {}) {
  size_t fbytes = (f.size() * 4 + 7) / 8 * 8;
  std::vector<unsigned char> p(fbytes + (i.size() * 4 + 7) / 8 * 8, 0);
  if (!f.empty()) std::memcpy(p.data(), f.data(), f.size() * 4);
  if (!i.empty()) std::memcpy(p.data() + fbytes, i.data(), i.size() * 4);
  return p;
}

std::vector<float> iota(size_t n, float from) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = from + float(k);
  return v;
}

// Buffers of the executor's kind, with the Tensors the kernel sees (owners named, as the executor does).
struct Operand {
  std::shared_ptr<Buffer> buffer;
  Tensor tensor;
  explicit Operand(int64_t n, float value = 0) : buffer(Buffer::allocate(size_t(n) * 4)) {
    for (int64_t i = 0; i < n; ++i) static_cast<float*>(buffer->data())[i] = value + float(i);
    tensor = Tensor{buffer->data(), {n}, DType::Float32, &buffer};
  }
};

void test_success() {
  fake::reset(signature(kPsum5), payload(iota(5, 1)));
  {
    Operand x(5, 1), y(5);
    CHECK(run({x.tensor}, {y.tensor}).empty());
    for (int i = 0; i < 5; ++i) CHECK(static_cast<float*>(y.buffer->data())[i] == 2 * (1 + i));
    // Two processes: one message each way, its head and the operand.
    CHECK(fake::posted() == 1 && fake::nth(0).tag == fake::kExchangeTag && fake::nth(0).dest == 1 &&
          fake::nth(0).bytes == int(fake::kHead + 24));
  }
  {
    Operand x(5, 1);  // the result overwrites its operand
    CHECK(run({x.tensor}, {x.tensor}).empty());
    CHECK(static_cast<float*>(x.buffer->data())[4] == 10);
  }
  CHECK(mpi::seq() == 2);
  {
    // Two float32 operands and two int32 ones: packed by dtype, in order.
    fake::reset(signature(kPsum5), payload({1, 2, 5, 6, 7}, {3, 3, 4, 4}));
    Operand a(2, 1), b(3, 5), ya(2), yb(3);
    std::vector<int32_t> i{3, 3}, j{4, 4}, yi(2), yj(2);
    CHECK(run({a.tensor, Tensor{i.data(), {2}, DType::Int32}, b.tensor, Tensor{j.data(), {2}, DType::Int32}},
              {ya.tensor, Tensor{yi.data(), {2}, DType::Int32}, yb.tensor, Tensor{yj.data(), {2}, DType::Int32}})
              .empty());
    CHECK(static_cast<float*>(ya.buffer->data())[1] == 4 && static_cast<float*>(yb.buffer->data())[2] == 14);
    CHECK(yi[1] == 6 && yj[0] == 8);
  }
  CHECK(mpi::take_failure().first.empty());
}

// Three processes: the third hands its operand to process 0 first and gets the result back.
void test_three_processes() {
  fake::reset(signature(kPsum5), payload(iota(5, 1)), 3);
  Operand x(5, 1), y(5);
  CHECK(run({x.tensor}, {y.tensor}).empty());
  for (int i = 0; i < 5; ++i) CHECK(static_cast<float*>(y.buffer->data())[i] == 3 * (1 + i));
  CHECK(fake::sends_to(1) == 1 && fake::sends_to(2) == 1);
}

// Reductions other than sum combine with the core's own max and min (NaN propagates, as lax.max).
void test_max_min() {
  fake::reset(signature(kPsum5), payload({5, -1, NAN, 0, 2}));
  Operand x(5, 1), y(5);
  Attrs a = attrs();
  a.set("reduction", std::string("max"));
  CHECK(run({x.tensor}, {y.tensor}, a).empty());
  const float* v = static_cast<float*>(y.buffer->data());
  CHECK(v[0] == 5 && v[1] == 2 && std::isnan(v[2]) && v[3] == 4 && v[4] == 5);
  a.set("reduction", std::string("min"));
  CHECK(run({x.tensor}, {y.tensor}, a).empty());
  CHECK(v[0] == 1 && v[1] == -1 && std::isnan(v[2]) && v[3] == 0 && v[4] == 2);
}

// The others never arrive: a roll call names the absent ones. Process 0 of three waits for the
// third's operand before it sends anything: nothing is left in flight.
void test_timeout() {
  fake::reset(signature(kPsum5), payload(iota(5, 1)), 3);
  fake::w.peers_arrive = false;
  fake::w.answering = {1};  // process 1 waits in this collective too; process 2 does not answer
  size_t before = mpi::abandoned();
  {
    Operand x(5, 1), y(5);
    std::string err = run({x.tensor}, {y.tensor});
    CHECK(contains(err, "process(es) [2] did not reach collective #1 (psum(axis_name=('i',)) of float32[5]) of "
                        "process 0 within 0.05 s"));
  }
  auto [kind, msg] = mpi::take_failure();
  CHECK(kind == "timeout");
  CHECK(fake::w.roll_calls_to == std::vector<int>({1, 2}));
  CHECK(fake::sends_to(1) + fake::sends_to(2) == 0 && mpi::abandoned() == before);
}

// Two processes: the message sent to the peer stays in flight when the wait for the peer's gives
// up, a large operand's bytes read by the late process after the test dropped its buffers. While
// it waited, the core answered another process's roll call with its collective's number.
void test_timeout_sending() {
  fake::reset(signature(kPsum5), payload(iota(1000, 1)));
  fake::w.peers_arrive = false;
  fake::w.roll_call_from = 1;
  size_t before = mpi::abandoned();
  {
    Operand x(1000, 1), y(1000);
    CHECK(contains(run({x.tensor}, {y.tensor}), "did not reach collective #1"));
    // 4,064 bytes: two fragments, each small enough for an eager send.
    CHECK(fake::in_flight() >= 2 && fake::nth(0).bytes == 4000 && fake::nth(1).bytes == int(fake::kHead));
  }  // the test's references to the buffers go
  CHECK(mpi::take_failure().first == "timeout");
  CHECK(mpi::abandoned() == before + 1);
  CHECK(fake::w.answers_sent == (std::vector<std::pair<int, int64_t>>{{1, 1}}));
  const void* old_send = fake::nth(0).send;
  fake::arrive_late();  // the late process reads the message, kept alive by the core
  {  // Nothing runs after it (the core's operations were in flight), until a new installation.
    Operand x(5, 1), y(5);
    CHECK(contains(run({x.tensor}, {y.tensor}), "an earlier collective across processes failed on process 0"));
    CHECK(mpi::take_failure().first == "mpi");
  }
  // The staging buffer the abandoned send holds is not handed out again.
  fake::reset(signature(kPsum5), payload(iota(1000, 1)));
  Operand x(1000, 1), y(1000);
  CHECK(run({x.tensor}, {y.tensor}).empty());
  CHECK(static_cast<float*>(y.buffer->data())[999] == 2000);
  CHECK(fake::nth(0).send != old_send);
}

// A notice (another process failed) ends the wait.
void test_notice() {
  fake::reset(signature(kPsum5), payload(iota(5, 1)));
  fake::w.peers_arrive = false;
  fake::w.notice = true;
  {
    Operand x(5, 1), y(5);
    CHECK(contains(run({x.tensor}, {y.tensor}), "psum(axis_name=('i',)) of float32[5]"));
  }
  CHECK(mpi::take_failure().first == "notice");
}

// Another collective on another process, named through the all-gather of the signatures: one of
// another description but the same size, and one of another size (the Python collectives' check:
// a head alone).
void test_mismatch() {
  const std::string four = "psum(axis_name=('i',)) of float32[4]";
  for (bool same_size : {true, false}) {
    fake::reset(signature(four), same_size ? payload(iota(5, 1)) : std::vector<unsigned char>{});
    std::string theirs = signature(four);
    int64_t one = 1;
    std::memcpy(&theirs[0], &one, 8);
    fake::w.other_signature = theirs;
    Operand x(5, 1), y(5, 7);
    CHECK(contains(run({x.tensor}, {y.tensor}),
                   "mismatched collectives across processes: process 0 runs collective #1 psum(axis_name=('i',)) of "
                   "float32[5], process 1 runs collective #1 psum(axis_name=('i',)) of float32[4]"));
    CHECK(mpi::take_failure().first == "mismatch");
    CHECK(fake::posted() == 2 && fake::nth(1).kind == fake::Kind::Allgather);
    CHECK(static_cast<float*>(y.buffer->data())[0] == 7);  // the result is not written
  }
  // The same collective at another number (a process ran one more before): a mismatch too.
  fake::reset(signature(kPsum5), payload(iota(5, 1)));
  fake::w.skew = 1;
  fake::w.other_signature = signature(kPsum5);
  Operand x(5, 1), y(5);
  CHECK(contains(run({x.tensor}, {y.tensor}), "mismatched collectives across processes"));
  mpi::take_failure();
}

// The check alone (a Python collective's): a head each way; against an all_reduce, a mismatch.
void test_check_alone() {
  fake::reset(signature(kPsum5), {});
  mpi::begin(3, 0.05, INT64_MAX);
  mpi::check(signature(kPsum5));
  CHECK(fake::posted() == 1 && fake::nth(0).bytes == int(fake::kHead) && mpi::seq() == 3);
  fake::reset(signature(kPsum5), payload(iota(5, 1)));
  fake::w.other_signature = signature(kPsum5);
  bool failed = false;
  try {
    mpi::check(signature("all_gather(axis_name=('i',)) of float32[5]"));
  } catch (const std::exception& e) {
    failed = contains(e.what(), "mismatched collectives across processes: process 0 runs collective #0 all_gather");
  }
  CHECK(failed);
  mpi::take_failure();
}

// The mismatch's all-gather times out (a process died meanwhile): its buffers are kept too.
void test_mismatch_gather_timeout() {
  fake::reset(signature(kPsum5), payload(iota(5, 1)));
  fake::w.skew = 1;
  fake::w.gather_arrives = false;
  {
    Operand x(5, 1), y(5);
    CHECK(contains(run({x.tensor}, {y.tensor}), "the others' descriptions did not arrive within 0.05 s"));
  }
  mpi::take_failure();
  fake::w.other_signature = std::string(256, '\0');
  fake::arrive_late();
}

// A sum of more than 1 MiB: the check alone, then MPI's all-reduce, straight from and into the
// executor's buffers; when it does not complete, a late process writes the sum into the result's
// buffer, which the core keeps alive.
void test_large_sum() {
  const int64_t n = 300000;
  fake::reset(signature(kPsum5), {});
  {
    Operand x(n, 1), y(n);
    CHECK(run({x.tensor}, {y.tensor}).empty());
    CHECK(static_cast<float*>(y.buffer->data())[n - 1] == 2 * float(n));
    CHECK(fake::posted() == 2 && fake::nth(0).bytes == int(fake::kHead) && fake::nth(1).kind == fake::Kind::Allreduce &&
          fake::nth(1).send == x.buffer->data() && fake::nth(1).recv == y.buffer->data());
  }
  fake::w.sums_arrive = false;
  {
    Operand x(n, 1), y(n);
    CHECK(contains(run({x.tensor}, {y.tensor}), "collective #2 (psum(axis_name=('i',)) of float32[5]) did not "
                                                "complete on process 0 within 0.05 s"));
  }  // the test's references to the buffers go
  CHECK(mpi::take_failure().first == "timeout");
  fake::arrive_late();
}

// Through a compiled program: a run that fails, then one that gives the sum.
void test_through_the_executor() {
  fake::reset(signature(kPsum5), payload(std::vector<float>(256, 1.f)));
  fake::w.peers_arrive = false;
  {
    Graph g;
    ValueRef p = g.parameter({{256}, DType::Float32});
    ValueRef e = g.add(OpId::exp_, {p}, {})[0];
    g.set_outputs({g.add(OpId::all_reduce_, {e}, attrs())[0]});
    auto exe = compile(g);
    Array x = Array::empty({256}, DType::Float32);
    std::memset(x.data(), 0, x.nbytes());
    bool failed = false;
    try {
      exe->run_now({x});
    } catch (const std::exception& err) {
      failed = contains(err.what(), "did not reach collective #1");
    }
    CHECK(failed);
  }
  mpi::take_failure();
  fake::arrive_late();
  fake::reset(signature(kPsum5), payload(std::vector<float>(8, 1.f)));
  Graph g;
  ValueRef p = g.parameter({{8}, DType::Float32});
  g.set_outputs({g.add(OpId::all_reduce_, {g.add(OpId::exp_, {p}, {})[0]}, attrs())[0]});
  Array x = Array::empty({8}, DType::Float32);
  std::memset(x.data(), 0, x.nbytes());
  std::vector<Array> out = compile(g)->run_now({x});
  CHECK(static_cast<float*>(out[0].data())[7] == 2);
}

}  // namespace

int main() {
  test_success();
  test_three_processes();
  test_max_min();
  test_timeout();
  test_timeout_sending();
  test_notice();
  test_mismatch();
  test_check_alone();
  test_mismatch_gather_timeout();
  test_large_sum();
  test_through_the_executor();
  fake::arrive_late();
  std::printf("abandoned operation sets: %zu\n", mpi::abandoned());
  CHECK(mpi::abandoned() == 5);
  return check_report();
}
