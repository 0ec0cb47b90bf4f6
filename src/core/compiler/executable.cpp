// The executor: walks the plan's steps over the buffers of one run. Never touches Python: host
// callbacks go through the registry (callbacks.h), whose Python wrappers take the GIL themselves.
#include "core/compiler/executable.h"

#include <algorithm>
#include <cstring>

#include "core/compiler/backend.h"
#include "core/compiler/callbacks.h"
#include "core/compiler/passes.h"
#include "core/devices.h"
#include "core/float_env.h"
#include "core/ops/dynamic_window.h"
#include "core/reference/interpreter.h"
#include "core/stream.h"

namespace xjax {

namespace {
// Up to this many elements of work a graph runs on the caller's thread (without the GIL) when
// the stream is idle: two thread hand-offs cost more than the overlap with Python they buy
// (measured: selu over 1M floats 10% faster). Larger graphs are queued and overlap the caller.
constexpr int64_t kInlineElements = int64_t(1) << 22;
constexpr size_t kStackOperands = 32;

// An `empty` value's buffer: zeros, so that a graph (one read from a file, say) that reads it before
// writing it sees no earlier array's contents in a reused block.
std::shared_ptr<Buffer> zeroed(size_t nbytes) {
  std::shared_ptr<Buffer> b = Buffer::allocate(nbytes);
  if (nbytes) std::memset(b->data(), 0, nbytes);
  return b;
}

// Moves a fused step's operand and result pointers to their windows (Step::windows): every offset
// from the start indices as they are before the kernel runs.
void place_windows(const Plan& p, const Step& step, const void** in, void** out) {
  thread_local std::vector<Tensor> starts;
  thread_local std::vector<int64_t> at;
  at.clear();
  for (const StepWindow& w : step.windows) {
    if (w.same_as >= 0) {
      at.push_back(at[w.same_as]);
      continue;
    }
    starts.resize(w.starts.size());
    for (size_t d = 0; d < w.starts.size(); ++d) {
      starts[d].data = const_cast<void*>(in[w.starts[d]]);
      starts[d].dtype = p.value_type[step.inputs[w.starts[d]]].dtype;
    }
    at.push_back(window_offset(w.whole, w.part, starts.data()) * int64_t(w.elem));
  }
  for (size_t k = 0; k < step.windows.size(); ++k) {
    const StepWindow& w = step.windows[k];
    if (w.output) out[w.index] = static_cast<char*>(out[w.index]) + at[k];
    else in[w.index] = static_cast<const char*>(in[w.index]) + at[k];
  }
}

std::string arg_str(const char* what, size_t i, const Array& a) {
  return std::string("[execute] ") + what + " " + std::to_string(i) + " (" + dtype_name(a.dtype) +
         shape_str(a.shape) + ")";
}
}  // namespace

// The buffers of one run, per storage (inline for small plans: no allocation per call). A storage
// refers to the shared_ptr that holds its buffer: the caller's (parameters, given outputs), the
// plan's (constants), the pool's, or its own slot for buffers made during the run. Referring
// instead of copying spares a loop body's run two atomic operations per carried buffer.
struct Executable::Frame {
  static constexpr size_t kInline = 48;
  struct Slot {
    const std::shared_ptr<Buffer>* ref = nullptr;
    void* ptr = nullptr;
    std::shared_ptr<Buffer> own;
  };
  Slot inline_slots[kInline];
  std::vector<Slot> heap;  // larger plans: taken from the thread's spares (a loop body's runs)
  Slot* slot;
  static std::vector<std::vector<Slot>>& spares() {
    thread_local std::vector<std::vector<Slot>> s;
    return s;
  }
  explicit Frame(size_t n) {
    if (n > kInline) {
      if (!spares().empty()) {
        heap = std::move(spares().back());
        spares().pop_back();
      }
      heap.resize(n);
    }
    slot = n > kInline ? heap.data() : inline_slots;
  }
  ~Frame() {
    if (heap.empty()) return;
    for (Slot& s : heap) s = Slot();
    spares().push_back(std::move(heap));
  }
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  // Kernel steps take vectors of Tensors: the thread's, kept so that their shapes reuse memory, and
  // found once per frame (a loop body's frame serves all its iterations) rather than per step.
  struct KernelArgs {
    std::vector<Tensor> in, out, starts;
  };
  KernelArgs& kernel_args() {
    if (!args) {
      thread_local KernelArgs per_thread;
      args = &per_thread;
    }
    return *args;
  }
  KernelArgs* args = nullptr;
  bool bound(int st) const { return slot[st].ref && *slot[st].ref; }
  const std::shared_ptr<Buffer>& buf(int st) const {
    static const std::shared_ptr<Buffer> none;
    return slot[st].ref ? *slot[st].ref : none;
  }
  void* ptr(int st) const { return slot[st].ptr; }
  // Binds a buffer made during the run (or taken from a control step's results).
  void bind(int st, std::shared_ptr<Buffer> b) {
    Slot& s = slot[st];
    s.ptr = b->data();
    s.own = std::move(b);
    s.ref = &s.own;
  }
  // Binds a buffer that `b` holds for the whole run; its data pointer is read where a step needs it
  // (Executable::touched_), not for every parameter a loop body passes through.
  void refer(int st, const std::shared_ptr<Buffer>& b) { slot[st].ref = &b; }
  void unbind(int st) { slot[st] = Slot(); }
  // The buffer, taken out of the frame when it is the frame's own (a loop consuming it), else shared.
  std::shared_ptr<Buffer> take(int st) {
    Slot& s = slot[st];
    return s.ref == &s.own ? std::move(s.own) : buf(st);
  }
};

Executable::Executable(Graph graph, const CompileOptions& options)
    : graph_(run_passes(widen_float8(graph), options.passes)), options_(options) {
  if (options_.reference) return;
  plan_ = build_plan(graph_, options_);
  if (runs_on_cpu(options_)) cpu_ = lower_to_cpu(plan_);
  plan_buffers(plan_, options_.reuse_buffers, options_.donate_params, cpu_.get());
  for (size_t st = 0; st < plan_.storages.size(); ++st) {  // what a frame binds once, and per run
    const Storage& s = plan_.storages[st];
    bool fixed = s.kind == Storage::Kind::Param || s.kind == Storage::Kind::Constant ||
                 (s.kind == Storage::Kind::Pool && s.index >= 0);
    (fixed ? bound_fixed_ : per_run_).push_back(int(st));
    if (s.kind == Storage::Kind::Fresh || s.kind == Storage::Kind::Output || (s.kind == Storage::Kind::Pool && !fixed))
      bound_next_.push_back(int(st));
  }
  std::vector<char> seen(plan_.storages.size(), 0);
  for (const Step& s : plan_.steps)
    for (const std::vector<int>* values : {&s.inputs, &s.outputs})
      for (int v : *values) {
        int st = plan_.value_storage[v];
        Storage::Kind kind = plan_.storages[st].kind;
        bool referred = kind == Storage::Kind::Param || kind == Storage::Kind::Constant ||
                        kind == Storage::Kind::Pool || kind == Storage::Kind::Output;
        if (referred && !seen[st] && kind == Storage::Kind::Param) touched_params_.push_back({plan_.storages[st].index, st});
        else if (referred && !seen[st]) touched_.push_back(st);
        seen[st] = 1;
      }
  param_touched_.assign(graph_.parameters().size(), -1);
  for (auto [k, st] : touched_params_) param_touched_[k] = st;
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    const Storage& s = plan_.storages[plan_.value_storage[plan_.outputs[i]]];
    all_outputs_.push_back(int(i));
    output_storage_.push_back(plan_.value_storage[plan_.outputs[i]]);
    if (s.kind != Storage::Kind::Param || s.index != int(i)) own_outputs_.push_back(int(i));
  }
  for (const Step& s : plan_.steps) {
    std::vector<int>& sts = step_storages_.emplace_back();
    for (const std::vector<int>* values : {&s.inputs, &s.outputs})
      for (int v : *values) sts.push_back(plan_.value_storage[v]);
  }
}

void Executable::validate(const std::vector<Array>& inputs) const {
  const auto& params = graph_.parameters();
  if (inputs.size() != params.size())
    throw ValueError("[execute] expected " + std::to_string(params.size()) + " arguments, got " +
                     std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TypeInfo& t = graph_.nodes()[params[i]].outputs[0];
    if (inputs[i].shape != t.shape || inputs[i].dtype != t.dtype)
      throw ValueError("[execute] argument " + std::to_string(i) + " should be " + dtype_name(t.dtype) +
                       shape_str(t.shape) + ", got " + dtype_name(inputs[i].dtype) + shape_str(inputs[i].shape));
    if (!inputs[i].buffer_matches())
      throw ValueError(arg_str("argument", i, inputs[i]) + " has no buffer of the " +
                       std::to_string(inputs[i].nbytes()) + " bytes it needs");
  }
}

// Caller-supplied results are written to: each must be of its output's type, with a buffer of its
// own (not an argument's, another result's, or a read-only one such as an executable's constant).
void Executable::validate_outputs(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const {
  std::vector<TypeInfo> types = output_types();
  if (outputs.size() != types.size())
    throw ValueError("[execute] expected " + std::to_string(types.size()) + " outputs, got " +
                     std::to_string(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Array& o = outputs[i];
    if (o.shape != types[i].shape || o.dtype != types[i].dtype)
      throw ValueError(arg_str("output", i, o) + " should be " + dtype_name(types[i].dtype) +
                       shape_str(types[i].shape));
    if (!o.buffer_matches())
      throw ValueError(arg_str("output", i, o) + " has no buffer of the " + std::to_string(o.nbytes()) +
                       " bytes it needs");
    if (o.buffer->read_only()) throw ValueError(arg_str("output", i, o) + " is read-only (a compiled constant)");
    for (size_t j = 0; j < inputs.size(); ++j)
      if (inputs[j].buffer == o.buffer) throw ValueError(arg_str("output", i, o) + " is argument " + std::to_string(j));
    for (size_t j = 0; j < i; ++j)
      if (outputs[j].buffer == o.buffer) throw ValueError(arg_str("output", i, o) + " is output " + std::to_string(j));
  }
}

bool Executable::output_takes_buffer(size_t i) const {
  int st = plan_.value_storage[plan_.outputs[i]];
  // An output computed over a pooled value's storage (a loop body's new carry) gets a buffer of its
  // own all the same (run_bound): only one over a donated parameter lives in that parameter's.
  int src = plan_.reused_in_place[st];
  return plan_.storages[st].kind == Storage::Kind::Output &&
         (src < 0 || plan_.storages[src].kind != Storage::Kind::Param);
}

void Executable::prepare_pool(std::vector<std::shared_ptr<Buffer>>& pool) const {
  pool.resize(plan_.pool.size());
  for (size_t b = 0; b < pool.size(); ++b)
    if (!pool[b] || pool[b].use_count() != 1) pool[b] = Buffer::allocate(plan_.pool[b]);
}

void Executable::bind_fixed(Frame& f, const std::shared_ptr<Buffer>* inputs,
                            std::vector<std::shared_ptr<Buffer>>& pool) const {
  for (int st : bound_fixed_) {
    const Storage& s = plan_.storages[st];
    if (s.kind == Storage::Kind::Param) f.refer(st, inputs[s.index]);
    else if (s.kind == Storage::Kind::Constant) f.refer(st, plan_.constants[s.index].buffer);
    else f.refer(st, pool[s.index]);
  }
}

void Executable::read_params(Frame& f, const std::shared_ptr<Buffer>* inputs, const std::vector<int>* changed) const {
  if (!changed) {
    for (auto [k, st] : touched_params_) f.slot[st].ptr = inputs[k]->data();
    return;
  }
  for (int k : *changed)
    if (param_touched_[k] >= 0) f.slot[param_touched_[k]].ptr = inputs[k]->data();
}

void Executable::run_bound(Frame& f, std::shared_ptr<Buffer>* outputs, const std::vector<int>& results) const {
  const Plan& p = plan_;
  for (int i : results) {
    int st = output_storage_[i];
    if (outputs[i] && p.storages[st].kind == Storage::Kind::Output && !f.bound(st)) f.refer(st, outputs[i]);
  }
  for (int st : bound_next_) {  // empty values; values written over donated parameters; fresh outputs
    const Storage& s = p.storages[st];
    int src = p.reused_in_place[st];
    if (s.kind == Storage::Kind::Fresh) f.bind(st, zeroed(s.nbytes));
    if (!f.bound(st) && src >= 0 && p.storages[src].kind == Storage::Kind::Param) f.refer(st, f.buf(src));
    if (!f.bound(st) && s.kind == Storage::Kind::Output) f.bind(st, Buffer::allocate(s.nbytes));
  }
  for (int st : touched_)
    if (f.bound(st)) f.slot[st].ptr = f.buf(st)->data();
  for (size_t s = 0; s < p.steps.size(); ++s) run_step(int(s), f);
  for (int i : results) {
    int st = output_storage_[i];
    if (!outputs[i]) {
      outputs[i] = f.buf(st);
    } else if (outputs[i].get() != f.buf(st).get()) {
      const TypeInfo& t = p.value_type[p.outputs[i]];
      size_t n = size_t(numel(t.shape)) * itemsize(t.dtype);
      if (n) std::memcpy(outputs[i]->data(), f.buf(st)->data(), n);
    }
  }
  for (int st : per_run_) f.unbind(st);  // the run's own buffers go; results are the caller's alone
}

void Executable::run_plan(const std::shared_ptr<Buffer>* inputs, std::shared_ptr<Buffer>* outputs,
                          std::vector<std::shared_ptr<Buffer>>* kept_pool) const {
  if (!cpu_) throw std::logic_error(std::string("[execute] the plan was compiled for ") + options_.caps->name);
  FlushSubnormalsScope flush;  // JAX's float environment; the caller's comes back after
  Frame f(plan_.storages.size());
  std::vector<std::shared_ptr<Buffer>> own_pool;
  std::vector<std::shared_ptr<Buffer>>& pool = kept_pool ? *kept_pool : own_pool;
  prepare_pool(pool);
  bind_fixed(f, inputs, pool);
  read_params(f, inputs, nullptr);
  run_bound(f, outputs, all_outputs_);
}

void Executable::run_step(int s, Frame& f) const {
  const Plan& p = plan_;
  const Step& step = p.steps[s];
  switch (step.kind) {
    case Step::Kind::Fused: {
      const void* in_stack[kStackOperands];
      void* out_stack[kStackOperands];
      thread_local std::vector<const void*> in_heap;  // (fused steps do not nest: one per thread)
      thread_local std::vector<void*> out_heap;
      const void** in = in_stack;
      void** out = out_stack;
      if (step.inputs.size() > kStackOperands) in_heap.resize(step.inputs.size()), in = in_heap.data();
      if (step.outputs.size() > kStackOperands) out_heap.resize(step.outputs.size()), out = out_heap.data();
      const int* sts = step_storages_[s].data();
      for (size_t k = 0; k < step.inputs.size(); ++k) in[k] = f.ptr(sts[k]);
      for (size_t k = 0; k < step.outputs.size(); ++k) out[k] = f.ptr(sts[step.inputs.size() + k]);
      if (!step.windows.empty()) place_windows(p, step, in, out);
      run_cpu_fused(*cpu_, s, in, out);
      return;
    }
    case Step::Kind::Kernel: {
      Frame::KernelArgs& args = f.kernel_args();
      std::vector<Tensor>& in = args.in;
      std::vector<Tensor>& out = args.out;
      auto fill = [&](std::vector<Tensor>& ts, const std::vector<int>& values) {
        ts.resize(values.size());
        for (size_t k = 0; k < values.size(); ++k) {
          const TypeInfo& t = p.value_type[values[k]];
          const int st = p.value_storage[values[k]];
          ts[k].data = f.ptr(st);
          ts[k].shape = t.shape;
          ts[k].dtype = t.dtype;
          ts[k].owner = &f.buf(st);
        }
      };
      fill(in, step.inputs);
      fill(out, step.outputs);
      run_cpu_kernel(*cpu_, s, in, out, step.attrs);
      return;
    }
    case Step::Kind::View: {  // the window's place in the operand's buffer
      std::vector<Tensor>& starts = f.kernel_args().starts;
      starts.resize(step.inputs.size() - 1);
      for (size_t k = 1; k < step.inputs.size(); ++k) {
        const TypeInfo& t = p.value_type[step.inputs[k]];
        starts[k - 1].data = f.ptr(p.value_storage[step.inputs[k]]);
        starts[k - 1].dtype = t.dtype;
      }
      const TypeInfo& x = p.value_type[step.inputs[0]];
      const TypeInfo& y = p.value_type[step.outputs[0]];
      const int src = p.value_storage[step.inputs[0]], dst = p.value_storage[step.outputs[0]];
      int64_t at = window_offset(x.shape, y.shape, starts.data());
      f.slot[dst].ref = f.slot[src].ref;
      f.slot[dst].ptr = static_cast<char*>(f.ptr(src)) + at * int64_t(itemsize(x.dtype));
      return;
    }
    case Step::Kind::Cond:
    case Step::Kind::While: return run_control(step, f);
    case Step::Kind::Callback: return run_callback(step, f);
  }
}

void Executable::run_control(const Step& step, Frame& f) const {
  const Plan& p = plan_;
  auto storage = [&](int v) { return p.value_storage[v]; };
  size_t first = step.kind == Step::Kind::Cond ? 1 : 0;
  std::vector<std::shared_ptr<Buffer>> carried;
  for (size_t k = first; k < step.inputs.size(); ++k) {
    const int st = storage(step.inputs[k]);
    if (!step.consumed.empty() && step.consumed[k]) carried.push_back(f.take(st));  // the loop's alone now
    else carried.push_back(f.buf(st));
  }
  std::vector<std::shared_ptr<Buffer>> results(step.outputs.size());
  for (size_t k = 0; k < step.outputs.size(); ++k) {  // results that are graph outputs: filled in place
    int st = storage(step.outputs[k]);
    if (p.storages[st].kind == Storage::Kind::Output) results[k] = f.buf(st);
  }
  if (step.kind == Step::Kind::Cond) {
    const void* idx = f.ptr(storage(step.inputs[0]));
    int64_t i = p.value_type[step.inputs[0]].dtype == DType::Bool ? int64_t(*static_cast<const bool*>(idx))
                                                                    : int64_t(*static_cast<const int32_t*>(idx));
    int64_t n = int64_t(step.subs.size());
    i = i < 0 ? 0 : (i >= n ? n - 1 : i);
    step.subs[i]->run_plan(carried.data(), results.data());
  } else {
    run_while(step, carried);
    for (size_t k = 0; k < results.size(); ++k) {
      if (!results[k]) {
        results[k] = carried[k];
      } else if (results[k] != carried[k]) {
        const TypeInfo& t = p.value_type[step.outputs[k]];
        size_t n = size_t(numel(t.shape)) * itemsize(t.dtype);
        if (n) std::memcpy(results[k]->data(), carried[k]->data(), n);
      }
    }
  }
  // A result may be an operand's buffer passed through; pooled buffers get reused: copy those.
  std::vector<const Buffer*> pooled;  // (few: listed first, not searched per result)
  for (size_t j = first; j < step.inputs.size(); ++j) {
    int ist = storage(step.inputs[j]);
    if (p.storages[ist].kind == Storage::Kind::Pool) pooled.push_back(f.buf(ist).get());
  }
  for (size_t k = 0; k < results.size(); ++k) {
    int st = storage(step.outputs[k]);
    if (p.storages[st].kind == Storage::Kind::Output) continue;
    std::shared_ptr<Buffer> b = results[k];
    if (std::find(pooled.begin(), pooled.end(), b.get()) != pooled.end()) {
      auto copy = Buffer::allocate(b->nbytes());
      if (b->nbytes()) std::memcpy(copy->data(), b->data(), b->nbytes());
      b = copy;
    }
    f.bind(st, std::move(b));
  }
}

// Runs a while step's loop over the carried buffers. Per iteration, what can be is reused: the
// intermediate buffers of the condition and the body, the predicate's buffer, and as the body's
// fresh results the buffers of the previous iteration's values that nothing holds any more.
void Executable::run_while(const Step& step, std::vector<std::shared_ptr<Buffer>>& carried) const {
  const Executable& cond = *step.subs[0];
  const Executable& body = *step.subs[1];
  const size_t n = carried.size();
  std::vector<std::shared_ptr<Buffer>> next(n), cond_pool, body_pool;
  std::vector<char> takes(n);
  const Plan& bp = body.plan();
  for (size_t k = 0; k < n; ++k) takes[k] = body.output_takes_buffer(k);
  // An output that is carried buffer k itself (passed through, or updated in place in its window)
  // stays in `next` too, from the start: an iteration goes over only the others (own_outputs_).
  const std::vector<int>& own = body.own_outputs_;
  for (size_t k = 0; k < n; ++k) next[k] = carried[k];
  for (int k : own) next[k].reset();
  const bool cond_takes = cond.output_takes_buffer(0);
  const CountedLoop& counted = step.counted;  // found by the planner: no condition plan to run
  std::shared_ptr<Buffer> pred;
  // The body's frame, bound once: it refers to `carried`'s elements, which stay where they are (the
  // values move between `carried` and `next` by swapping each pair), and to the pool's.
  if (!body.cpu_) throw std::logic_error(std::string("[execute] the plan was compiled for ") + body.options_.caps->name);
  Frame frame(bp.storages.size());
  body.prepare_pool(body_pool);
  body.bind_fixed(frame, carried.data(), body_pool);
  std::vector<int> changed;  // carried buffers whose data pointers the frame must read again (all, first)
  for (size_t k = 0; k < n; ++k) changed.push_back(int(k));
  for (;;) {
    if (counted.found()) {
      if (!(*static_cast<const int32_t*>(carried[counted.counter]->data()) < counted.bound)) break;
    } else {
      if (!cond_takes || pred.use_count() != 1) pred.reset();
      cond.run_plan(carried.data(), &pred, &cond_pool);
      if (!*static_cast<const bool*>(pred->data())) break;
    }
    // `next` holds the previous iteration's values: spare result buffers unless still held (a value
    // passed through, or updated in place, lives on in `carried`).
    for (int k : own)
      if (next[k] && (!takes[k] || next[k].use_count() != 1 || next[k]->read_only())) next[k].reset();
    // The body may update these carried buffers in place: each must be the loop's alone.
    for (int k : body.plan().donated) {
      const bool kept = next[k] == carried[k];
      if (carried[k].use_count() == 1 + kept && !carried[k]->read_only()) continue;
      auto copy = Buffer::allocate(carried[k]->nbytes());
      if (copy->nbytes()) std::memcpy(copy->data(), carried[k]->data(), copy->nbytes());
      carried[k] = std::move(copy);
      if (kept) next[k] = carried[k];
      changed.push_back(k);
    }
    body.prepare_pool(body_pool);  // (same size: the frame's references to its elements hold)
    body.read_params(frame, carried.data(), &changed);
    changed.clear();
    body.run_bound(frame, next.data(), own);
    for (int k : own) {
      if (next[k].get() != carried[k].get()) changed.push_back(k);
      carried[k].swap(next[k]);
    }
  }
}

void Executable::run_callback(const Step& step, Frame& f) const {
  const Plan& p = plan_;
  std::vector<Array> args;
  for (int v : step.inputs) {
    int st = p.value_storage[v];
    Array a;
    a.shape = p.value_type[v].shape;
    a.dtype = p.value_type[v].dtype;
    a.buffer = f.buf(st);
    Storage::Kind kind = p.storages[st].kind;
    // A buffer that a later step may reuse or update in place: hand out a copy.
    if (kind == Storage::Kind::Pool || (kind == Storage::Kind::Param && options_.donate_params)) {
      a.buffer = Buffer::allocate(a.nbytes());
      if (a.nbytes()) std::memcpy(a.data(), f.ptr(st), a.nbytes());
    }
    args.push_back(std::move(a));
  }
  call_callback(step.attrs.get_int("callback_id"), args);
}

void Executable::execute(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const {
  validate(inputs);
  validate_outputs(inputs, outputs);
  for (const Array& a : inputs) a.wait();  // rethrows an input's error
  if (options_.reference) {
    std::vector<Array> res = reference_run(graph_, inputs);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (res[i].nbytes()) std::memcpy(outputs[i].data(), res[i].data(), res[i].nbytes());
    return;
  }
  std::vector<std::shared_ptr<Buffer>> in, out;
  for (const Array& a : inputs) in.push_back(a.buffer);
  for (const Array& a : outputs) out.push_back(a.buffer);
  run_plan(in.data(), out.data());
}

// The output arrays of one run: buffers of inputs and constants where the plan returns those,
// else new buffers (ready with `event`), which `given` receives for run_plan to fill.
std::vector<Array> Executable::make_outputs(const std::vector<Array>& inputs, const std::shared_ptr<Event>& event,
                                            std::vector<std::shared_ptr<Buffer>>& given) const {
  const Plan& p = plan_;
  const size_t nout = p.outputs.size();
  std::vector<Array> outputs(nout);
  given.assign(nout, nullptr);
  for (size_t i = 0; i < nout; ++i) {
    int v = p.outputs[i];
    const Storage& s = p.storages[p.value_storage[v]];
    Array& o = outputs[i];
    o.shape = p.value_type[v].shape;
    o.dtype = p.value_type[v].dtype;
    if (s.kind == Storage::Kind::Param) {
      o.buffer = inputs[s.index].buffer;
      o.ready = inputs[s.index].ready;
    } else if (s.kind == Storage::Kind::Constant) {
      o.buffer = p.constants[s.index].buffer;
    } else {
      for (size_t j = 0; j < i && !o.buffer; ++j)  // outputs sharing a storage share the buffer
        if (p.value_storage[p.outputs[j]] == p.value_storage[v]) o.buffer = outputs[j].buffer;
      if (!o.buffer) o.buffer = Buffer::allocate(s.nbytes);
      o.ready = event;
      given[i] = o.buffer;
    }
  }
  return outputs;
}

bool Executable::brief() const {
  // (run() waits only in the reference interpreter; loops count as unbounded work; effects are
  // collectives and host callbacks)
  return !options_.reference && cpu_ && !plan_.has_effects && plan_.work <= kBriefElements;
}

std::vector<Array> Executable::run(const std::vector<Array>& inputs) {
  validate(inputs);
  if (options_.reference) {  // the reference interpreter runs synchronously
    for (const Array& a : inputs) a.wait();
    return reference_run(graph_, inputs);
  }
  const Plan& p = plan_;
  bool all_ready = true;
  for (const Array& a : inputs) all_ready = all_ready && a.computed();
  Stream& stream = Stream::global();
  // Tiny graphs run at once; so do graphs with host callbacks, so that their effects (prints)
  // happen before run() returns whenever nothing is queued ahead of them. A run from inside a
  // queued computation (a host callback calling a compiled function) runs at once too, as the
  // stream is busy with its caller, unless an input is still queued: then it can only follow.
  bool run_inline =
      all_ready && (Stream::in_task() || ((p.work <= kInlineElements || p.has_effects) && stream.idle()));
  std::shared_ptr<Event> event = run_inline ? nullptr : std::make_shared<Event>();
  std::vector<std::shared_ptr<Buffer>> given;
  std::vector<Array> outputs = make_outputs(inputs, event, given);
  if (run_inline) {
    for (const Array& a : inputs) a.wait();  // rethrows an input's error
    std::vector<std::shared_ptr<Buffer>> in(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) in[k] = inputs[k].buffer;
    run_plan(in.data(), given.data());
    return outputs;
  }
  auto self = shared_from_this();
  stream.enqueue([self, inputs, given, event]() mutable {
    try {
      for (const Array& a : inputs) a.wait();
      std::vector<std::shared_ptr<Buffer>> in(inputs.size());
      for (size_t k = 0; k < inputs.size(); ++k) in[k] = inputs[k].buffer;
      self->run_plan(in.data(), given.data());
      event->set();
    } catch (...) {
      event->set(std::current_exception());
    }
  });
  return outputs;
}

std::vector<Array> Executable::run_now(const std::vector<Array>& inputs) const {
  validate(inputs);
  for (const Array& a : inputs) a.wait();  // rethrows an input's error
  if (options_.reference) return reference_run(graph_, inputs);
  std::vector<std::shared_ptr<Buffer>> given;
  std::vector<Array> outputs = make_outputs(inputs, nullptr, given);
  std::vector<std::shared_ptr<Buffer>> in(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) in[k] = inputs[k].buffer;
  run_plan(in.data(), given.data());
  for (Array& o : outputs) o.ready = nullptr;  // (an input's event, already set)
  return outputs;
}

std::vector<std::vector<Array>> Executable::run_on_devices(const std::vector<std::vector<Array>>& inputs,
                                                           const std::vector<int>& devices) const {
  if (inputs.size() != devices.size())
    throw ValueError("[run_on_devices] " + std::to_string(inputs.size()) + " argument lists for " +
                     std::to_string(devices.size()) + " devices");
  for (const auto& args : inputs) {
    validate(args);
    for (const Array& a : args) a.wait();  // here: a device's host thread must not wait for queued work
  }
  std::vector<std::vector<Array>> outputs(inputs.size());
  std::vector<std::function<void()>> work;
  for (size_t i = 0; i < inputs.size(); ++i) work.push_back([&, i] { outputs[i] = run_now(inputs[i]); });
  xjax::run_on_devices(devices, work);
  return outputs;
}

CompileOptions default_compile_options() {
  CompileOptions o;
  o.passes = default_passes();
  return o;
}

std::shared_ptr<Executable> compile(Graph graph) {
  static const CompileOptions defaults = default_compile_options();
  return std::make_shared<Executable>(std::move(graph), defaults);
}

std::shared_ptr<Executable> compile(const Graph& graph, const CompileOptions& options) {
  return std::make_shared<Executable>(graph, options);
}

std::shared_ptr<Executable> compile_op(OpId op, const std::vector<TypeInfo>& inputs, const Attrs& attrs) {
  Graph g;
  std::vector<ValueRef> params;
  for (const TypeInfo& t : inputs) params.push_back(g.parameter(t));
  g.set_outputs(g.add(op, params, attrs));
  return compile(std::move(g));
}

}  // namespace xjax
