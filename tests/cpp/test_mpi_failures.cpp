// The all_reduce op across processes (src/core/distributed/mpi.cpp) over a fake MPI shim: no MPI
// needed. The fake plays the other processes: it completes operations at once, later, or never,
// answers roll calls, posts notices. The failure paths matter most: an operation still in flight
// when a wait gives up (a timeout, a notice, a mismatch) may be completed by a late process after
// the op returned, writing into its receive buffer and reading its send buffer. The fake does
// exactly that once the test has dropped every buffer it owns, so the AddressSanitizer build
// (.ci/sanitizers) fails on a use after free unless the core kept that memory alive.
#include <cstring>
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

struct Op {
  Kind kind;
  const void* send;
  void* recv;
  int count;  // elements (all-reduce) or bytes
  int type, op, comm, dest, tag;
  bool complete = false;
};

// What the other processes do.
struct World {
  int rank = 0, size = 2;
  bool check_arrives = true;   // the check all-reduce completes at once
  bool data_arrives = true;    // the data all-reduces complete at once
  bool gather_arrives = true;  // the mismatch's all-gather completes at once
  int64_t skew = 0;            // added to the check's maximum of the collective's number: a mismatch
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
    for (int i = 0; i < o.count; ++i) sink ^= static_cast<const unsigned char*>(o.send)[i];
    (void)sink;
    return;
  }
  if (o.kind == Kind::Allgather) {
    auto* out = static_cast<unsigned char*>(o.recv);
    for (int q = 0; q < w.size; ++q) {
      if (q == w.rank) std::memcpy(out + size_t(q) * size_t(o.count), o.send, size_t(o.count));
      else std::memcpy(out + size_t(q) * size_t(o.count), w.other_signature.data(), size_t(o.count));
    }
    return;
  }
  if (o.comm == XJAX_MPI_CONTROL) {  // the check: (x, -x) of every process; the others alike but for skew
    auto* in = static_cast<const int64_t*>(o.send);
    auto* out = static_cast<int64_t*>(o.recv);
    for (int i = 0; i < o.count; ++i) out[i] = in[i];
    out[0] += w.skew;
    return;
  }
  if (o.type == XJAX_MPI_FLOAT32) {  // a sum over the processes, each contributing the same
    auto* in = static_cast<const float*>(o.send);
    auto* out = static_cast<float*>(o.recv);
    for (int i = 0; i < o.count; ++i) out[i] = in[i] * float(w.size);
  } else if (o.type == XJAX_MPI_INT32) {
    auto* in = static_cast<const int32_t*>(o.send);
    auto* out = static_cast<int32_t*>(o.recv);
    for (int i = 0; i < o.count; ++i) out[i] = in[i] * w.size;
  } else {
    throw std::logic_error("the fake reduces float32 and int32 only");
  }
}

// The i-th operation of this case.
Op& nth(size_t i) { return w.ops.at(w.first + i); }
size_t posted() { return w.ops.size() - w.first; }

// The late processes arrive: every operation still in flight completes now.
void arrive_late() {
  for (Op& o : w.ops) perform(o);
}

size_t in_flight() {  // this case's collectives still in flight
  size_t n = 0;
  for (size_t i = w.first; i < w.ops.size(); ++i) n += !w.ops[i].complete && w.ops[i].kind != Kind::Send;
  return n;
}

// C linkage, as the shim's functions have (the types in mpi_shim.h), under names of their own.
extern "C" {
int fake_iallreduce(const void* send, void* recv, int count, int type, int op, int comm, xjax_mpi_request* r) {
  Op& o = w.ops.emplace_back(Op{Kind::Allreduce, send, recv, count, type, op, comm, -1, -1});
  int64_t id = int64_t(w.ops.size());
  std::memset(r, 0, sizeof *r);
  std::memcpy(r, &id, sizeof id);
  bool now = comm == XJAX_MPI_CONTROL ? w.check_arrives : w.data_arrives;
  if (now) perform(o);
  return 0;
}

int fake_iallgather(const void* send, void* recv, int bytes, int comm, xjax_mpi_request* r) {
  record(Op{Kind::Allgather, send, recv, bytes, XJAX_MPI_BYTE, -1, comm, -1, -1}, r);
  if (w.gather_arrives) perform(w.ops.back());
  return 0;
}

int fake_isend(const void* buf, int bytes, int dest, int tag, int comm, xjax_mpi_request* r) {
  record(Op{Kind::Send, buf, nullptr, bytes, XJAX_MPI_BYTE, -1, comm, dest, tag}, r);
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
  return 0;  // (sends complete only when the late processes arrive: their bytes must stay alive)
}

int fake_iprobe(int source, int tag, int comm, int* found, int* found_source, int* found_bytes) {
  (void)source, (void)comm;
  *found = 0;
  if (tag == 2 && w.notice) *found = 1, *found_source = 1, *found_bytes = 40;
  if (tag == 4 && !w.inbox_answers.empty()) *found = 1, *found_source = w.inbox_answers.front().first, *found_bytes = 8;
  if (tag == 3 && w.roll_call_from >= 0) *found = 1, *found_source = w.roll_call_from, *found_bytes = 8;
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
  if (tag != 4 || w.inbox_answers.empty() || w.inbox_answers.front().first != source || bytes != 8)
    throw std::logic_error("the fake receives only the answers it announced");
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

// A fresh world of `size` processes, this one rank 0, the core's MPI installed over it.
void reset(int size = 2) {
  arrive_late();  // (what an earlier case left in flight lands in memory the core kept)
  std::vector<Op> ops = std::move(w.ops);
  w = World{};
  w.ops = std::move(ops);
  w.first = w.ops.size();
  w.size = size;
  mpi::Api a;
  a.iallreduce = fake_iallreduce;
  a.iallgather = fake_iallgather;
  a.isend = fake_isend;
  a.iprobe = fake_iprobe;
  a.recv = fake_recv;
  a.test = fake_test;
  a.rank = 0, a.size = size;
  mpi::install(a);
  mpi::begin(0, true, 0.05, INT64_MAX);
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

// Buffers of the executor's kind, with the Tensors the kernel sees (owners named, as the executor does).
struct Operand {
  std::shared_ptr<Buffer> buffer;
  Tensor tensor;
  explicit Operand(int64_t n, float value = 0) : buffer(Buffer::allocate(size_t(n) * 4)) {
    for (int64_t i = 0; i < n; ++i) static_cast<float*>(buffer->data())[i] = value + float(i);
    tensor = Tensor{buffer->data(), {n}, DType::Float32, &buffer};
  }
};

void test_success_direct_and_staged() {
  fake::reset();
  {
    Operand x(5, 1), y(5);
    CHECK(run({x.tensor}, {y.tensor}).empty());
    for (int i = 0; i < 5; ++i) CHECK(static_cast<float*>(y.buffer->data())[i] == 2 * (1 + i));
    // Straight from and into the operands' buffers: one check, one data all-reduce.
    CHECK(fake::posted() == 2 && fake::nth(1).send == x.buffer->data() && fake::nth(1).recv == y.buffer->data());
  }
  {
    std::vector<float> x{1, 2, 3}, y(3);  // memory the core cannot keep alive: staged
    CHECK(run({Tensor{x.data(), {3}, DType::Float32}}, {Tensor{y.data(), {3}, DType::Float32}}).empty());
    CHECK(y[0] == 2 && y[1] == 4 && y[2] == 6);
    CHECK(fake::w.ops.back().recv != y.data() && fake::w.ops.back().send != x.data());
  }
  {
    Operand x(4, 1);  // the result overwrites its operand: sent from a copy
    CHECK(run({x.tensor}, {x.tensor}).empty());
    CHECK(static_cast<float*>(x.buffer->data())[3] == 8);
  }
  {
    Operand a(2, 1), b(3, 5), ya(2), yb(3);  // two operands of one dtype: packed
    CHECK(run({a.tensor, b.tensor}, {ya.tensor, yb.tensor}).empty());
    CHECK(static_cast<float*>(ya.buffer->data())[1] == 4 && static_cast<float*>(yb.buffer->data())[2] == 14);
  }
  CHECK(mpi::seq() == 4);
  CHECK(mpi::take_failure().first.empty());
}

// The check times out: the others never arrive; a roll call names the absent ones. The check's
// all-reduce, still in flight, lands later in memory the core kept.
void test_check_timeout() {
  fake::reset(3);
  fake::w.check_arrives = false;
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
  // The data's all-reduce went with the check (one round trip), and stays in flight with it.
  CHECK(fake::posted() >= 2 && fake::nth(0).comm == XJAX_MPI_CONTROL && fake::nth(1).comm == XJAX_MPI_DATA);
  CHECK(fake::w.roll_calls_to == std::vector<int>({1, 2}));
  CHECK(mpi::abandoned() == before + 1);
  CHECK(fake::in_flight() >= 1);
  fake::arrive_late();  // writes the check's result, reads the roll calls' bytes: all still alive
  // Nothing runs after it (the core's operations are in flight), until a new installation.
  Operand x(5, 1), y(5);
  CHECK(contains(run({x.tensor}, {y.tensor}), "an earlier collective across processes failed on process 0"));
  CHECK(mpi::take_failure().first == "mpi");
}

// The data all-reduce times out, straight in the executor's buffers: those are kept alive. While
// it waited, it answered another process's roll call with its collective's number.
void test_data_timeout_direct() {
  fake::reset();
  fake::w.data_arrives = false;
  fake::w.roll_call_from = 1;
  {
    Operand x(1000, 1), y(1000);
    CHECK(contains(run({x.tensor}, {y.tensor}), "collective #1 (psum(axis_name=('i',)) of float32[5]) did not "
                                                "complete on process 0 within 0.05 s"));
    CHECK(fake::nth(1).recv == y.buffer->data());
  }  // the test's references to the buffers go
  CHECK(mpi::take_failure().first == "timeout");
  CHECK(fake::w.answers_sent == (std::vector<std::pair<int, int64_t>>{{1, 1}}));
  fake::arrive_late();  // a late process's sum lands in y's buffer, pinned by the core
}

// The same through staging buffers (operands whose memory the core cannot keep) and packing.
void test_data_timeout_staged() {
  fake::reset();
  fake::w.data_arrives = false;
  {
    std::vector<float> x(1000, 1.f), y(1000);
    std::vector<int32_t> i(10, 3), j(10, 4), yi(10), yj(10);
    std::string err = run({Tensor{x.data(), {1000}, DType::Float32}, Tensor{i.data(), {10}, DType::Int32},
                           Tensor{j.data(), {10}, DType::Int32}},
                          {Tensor{y.data(), {1000}, DType::Float32}, Tensor{yi.data(), {10}, DType::Int32},
                           Tensor{yj.data(), {10}, DType::Int32}});
    CHECK(contains(err, "did not complete on process 0"));
    CHECK(fake::in_flight() == 2);  // one per dtype
  }
  mpi::take_failure();
  const void* old_send = fake::nth(1).send;
  void* old_recv = fake::nth(1).recv;
  fake::arrive_late();
  // The staging buffers the abandoned operations hold are not handed out again.
  fake::reset();
  std::vector<float> x(1000, 2.f), y(1000);
  CHECK(run({Tensor{x.data(), {1000}, DType::Float32}}, {Tensor{y.data(), {1000}, DType::Float32}}).empty());
  CHECK(y[999] == 4);
  CHECK(fake::nth(1).send != old_send && fake::nth(1).recv != old_recv);
}

// A notice (another process failed) ends the wait for the data; the operation stays in flight.
void test_notice() {
  fake::reset();
  fake::w.data_arrives = false;
  fake::w.notice = true;
  {
    Operand x(5, 1), y(5);
    CHECK(contains(run({x.tensor}, {y.tensor}), "psum(axis_name=('i',)) of float32[5]"));
  }
  CHECK(mpi::take_failure().first == "notice");
  fake::arrive_late();
}

// Another collective on another process: named through the all-gather of the signatures. The
// data's all-reduce, posted with the check, is abandoned (kept alive): MPI may never finish it.
void test_mismatch() {
  fake::reset();
  fake::w.skew = 1;
  std::string theirs = signature("psum(axis_name=('i',)) of float32[4]");
  int64_t one = 1;
  std::memcpy(&theirs[0], &one, 8);
  fake::w.other_signature = theirs;
  Operand x(5, 1), y(5);
  CHECK(contains(run({x.tensor}, {y.tensor}),
                 "mismatched collectives across processes: process 0 runs collective #1 psum(axis_name=('i',)) of "
                 "float32[5], process 1 runs collective #1 psum(axis_name=('i',)) of float32[4]"));
  CHECK(mpi::take_failure().first == "mismatch");
  CHECK(fake::posted() == 3 && fake::nth(1).comm == XJAX_MPI_DATA && fake::nth(2).kind == fake::Kind::Allgather);
}

// The mismatch's all-gather times out (a process died meanwhile): its buffers are kept too.
void test_mismatch_gather_timeout() {
  fake::reset();
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

// Through a compiled program: the executor names the buffers (Tensor::owner), and a late process
// writes into the result's buffer after the run failed and its arrays went away.
void test_through_the_executor() {
  fake::reset();
  fake::w.data_arrives = false;
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
      failed = contains(err.what(), "did not complete on process 0");
    }
    CHECK(failed);
  }
  mpi::take_failure();
  fake::arrive_late();
  // And a run that succeeds gives the sum.
  fake::reset();
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
  test_success_direct_and_staged();
  test_check_timeout();
  test_data_timeout_direct();
  test_data_timeout_staged();
  test_notice();
  test_mismatch();
  test_mismatch_gather_timeout();
  test_through_the_executor();
  fake::arrive_late();
  std::printf("abandoned operation sets: %zu\n", mpi::abandoned());
  CHECK(mpi::abandoned() == 7);
  return check_report();
}
