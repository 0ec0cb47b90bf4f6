// The .xjx format in C++: checksum vectors, a round trip (graph text, weights, results), the
// header checks, hostile files, and a mutation loop whose every case must load or throw
// FormatError (run under ASan/UBSan by .ci/sanitizers).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "check.h"
#include "core/compiler/constant.h"
#include "core/export/format.h"
#include "core/export/loaded.h"

using namespace xjax;

namespace {

Array filled(const Shape& s, float start) {
  Array a = Array::empty(s, DType::Float32);
  for (int64_t i = 0; i < a.size(); ++i) static_cast<float*>(a.data())[i] = start + float(i);
  return a;
}

std::shared_ptr<const Graph> branch(OpId op) {
  auto g = std::make_shared<Graph>();
  ValueRef x = g->parameter({{2, 3}, DType::Float32});
  g->set_outputs(g->add(op, {x}, {}));
  return g;
}

// f(i, x; w) = cond(i, neg, exp)(x * w + c) with w a weight and c a constant of the graph.
ModuleDef sample_module() {
  ModuleDef m;
  m.producer = "test_export";
  m.weights.push_back(filled({2, 3}, 1.0f));
  auto g = std::make_shared<Graph>();
  ValueRef i = g->parameter({{}, DType::Int32});
  ValueRef x = g->parameter({{2, 3}, DType::Float32});
  ValueRef w = g->parameter({{2, 3}, DType::Float32});
  Array c = filled({2, 3}, 0.5f);
  ValueRef cv = g->add(OpId::constant_, {}, constant_attrs_from(c.data(), {{2, 3}, DType::Float32}))[0];
  ValueRef xw = g->add(OpId::mul_, {x, w}, {})[0];
  ValueRef y = g->add(OpId::add_, {xw, cv}, {})[0];
  ValueRef r = g->add_subgraph_op(OpId::cond_, {i, y}, {}, {branch(OpId::neg_), branch(OpId::exp_)})[0];
  Attrs sum;
  sum.set("axes", std::vector<int64_t>{1});
  ValueRef s = g->add(OpId::reduce_sum_, {r}, sum)[0];
  g->set_outputs({r, s, r});
  FunctionDef f;
  f.name = "f";
  f.graph = g;
  f.inputs = {{{{}, DType::Int32}, true}, {{{2, 3}, DType::Float32}, false}};
  f.outputs = {{{{2, 3}, DType::Float32}, false}, {{{2}, DType::Float32}, false}, {{{2, 3}, DType::Float32}, false}};
  f.weights = {0};
  f.in_tree = "in";
  f.out_tree = "out";
  m.functions.push_back(f);
  FunctionDef h = f;  // a second function over the same weight
  h.name = "h";
  m.functions.push_back(h);
  return m;
}

void reseal(std::string& file) {
  uint64_t sum = checksum(file.data(), file.size() - 8);
  std::memcpy(&file[file.size() - 8], &sum, 8);
}

bool has_loop(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.op == OpId::while_) return true;
    for (const auto& s : n.subgraphs)
      if (has_loop(*s)) return true;
  }
  return false;
}

// The FormatError message of reading `file`, or "" when it loads. With `run`, a loaded function
// without loops (a mutated loop may never end) also runs on zeros: whatever the shape rules let
// through, the kernels must survive (an error is fine, a crash is not).
std::string load_error(const std::string& file, bool run = false) {
  std::vector<std::shared_ptr<LoadedFunction>> fns;
  try {
    ReadOptions o;
    o.max_array_bytes = int64_t(1) << 26;
    ModuleDef m = read_module_bytes(file.data(), file.size(), o);
    fns = compile_module(m);
  } catch (const FormatError& e) {
    return e.what();
  }
  for (const auto& f : run ? fns : std::vector<std::shared_ptr<LoadedFunction>>{}) {
    if (has_loop(*f->def().graph)) continue;
    std::vector<Array> args;
    for (const ArgSpec& s : f->def().inputs) {
      args.push_back(Array::empty(s.type.shape, s.type.dtype));
      if (args.back().nbytes()) std::memset(args.back().data(), 0, args.back().nbytes());
    }
    try {
      f->call_now(args);
    } catch (const std::exception&) {
    }
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void test_checksum() {
  CHECK(checksum("", 0) == 0xef46db3751d8e999ull);
  CHECK(checksum("a", 1) == 0xd24ec4f1a98c6e5bull);
  CHECK(checksum("abc", 3) == 0x44bc2cf5ad770999ull);
  unsigned char r[100];
  for (int i = 0; i < 100; ++i) r[i] = (unsigned char)i;
  CHECK(checksum(r, 100) == 0x6ac1e58032166597ull);
  std::string x(37, 'x');
  CHECK(checksum(x.data(), x.size()) == 0x1e580c475bdc5381ull);
}

void test_round_trip() {
  ModuleDef m = sample_module();
  std::string file = write_module(m);
  CHECK(file.size() % 8 == 0);
  ModuleDef r = read_module_bytes(file.data(), file.size());
  CHECK(r.producer == "test_export");
  CHECK(r.functions.size() == 2 && r.functions[1].name == "h");
  CHECK(r.functions[0].graph->text() == m.functions[0].graph->text());
  CHECK(r.functions[0].inputs == m.functions[0].inputs && r.functions[0].outputs == m.functions[0].outputs);
  CHECK(r.functions[0].in_tree == "in" && r.functions[0].out_tree == "out");
  CHECK(r.weights.size() == 1 && r.weights[0].buffer->read_only());
  CHECK(reinterpret_cast<uintptr_t>(r.weights[0].data()) % 64 == 0);
  CHECK(std::memcmp(r.weights[0].data(), m.weights[0].data(), 24) == 0);
  // The same bits from the original graph and the read one, for both branches.
  for (int branch_index : {0, 1}) {
    Array i = Array::empty({}, DType::Int32);
    *static_cast<int32_t*>(i.data()) = branch_index;
    Array x = filled({2, 3}, -2.0f);
    const int64_t limit = ReadOptions().max_array_bytes;  // (compile_module's default)
    LoadedFunction orig(m.functions[0], m.weights, limit), loaded(r.functions[0], r.weights, limit);
    std::vector<Array> a = orig.call_now({i, x}), b = loaded.call(std::vector<Array>{i, x});
    CHECK(a.size() == 3 && b.size() == 3);
    for (size_t k = 0; k < b.size(); ++k) {
      b[k].wait();
      CHECK(a[k].nbytes() == b[k].nbytes() && std::memcmp(a[k].data(), b[k].data(), a[k].nbytes()) == 0);
    }
    CHECK(b[0].buffer == b[2].buffer);  // a repeated result is the same array
  }
  // Arguments are checked against the signature.
  LoadedFunction f(r.functions[0], r.weights, ReadOptions().max_array_bytes);
  try {
    f.call_now({filled({2, 3}, 0)});
    CHECK(false);
  } catch (const std::invalid_argument& e) {
    CHECK(contains(e.what(), "[f] takes 2 arguments, got 1"));
  }
}

void test_header_errors() {
  std::string file = write_module(sample_module());
  CHECK(load_error(file).empty());
  std::string bad = file;
  bad[1] = 'Y';
  CHECK(contains(load_error(bad), "not an .xjx file"));
  bad = file;
  bad[8] = 2;  // format version 2
  CHECK(contains(load_error(bad), "format version 2, this reader reads version 1"));
  bad = file;
  bad[12] = 9;  // opset 9
  CHECK(contains(load_error(bad), "needs opset 9") && contains(load_error(bad), "implements opsets 1 to 1"));
  CHECK(contains(load_error(file.substr(0, file.size() - 1)), "truncated"));
  CHECK(contains(load_error(file.substr(0, 20)), "truncated"));
  CHECK(contains(load_error(file + std::string(8, '\0')), "trailing bytes"));
  bad = file;
  bad[100] ^= 1;
  CHECK(contains(load_error(bad), "checksum mismatch"));
}

// Edits one program field, reseals, and returns the error.
std::string edited(const std::string& file, size_t at, const void* v, size_t n) {
  std::string bad = file;
  std::memcpy(&bad[at], v, n);
  reseal(bad);
  return load_error(bad);
}

void test_hostile_fields() {
  std::string file = write_module(sample_module());
  // The producer's length field is the program's first 8 bytes.
  uint64_t huge = uint64_t(1) << 60;
  CHECK(contains(edited(file, 64, &huge, 8), "producer is 1152921504606846976 bytes long"));
  // The op count follows "test_export" (11 bytes).
  uint32_t many = 0xffffffffu;
  CHECK(contains(edited(file, 64 + 8 + 11, &many, 4), "op count is 4294967295"));
  // A weight section beyond the file.
  uint64_t far = uint64_t(1) << 40;
  CHECK(contains(edited(file, 48, &far, 8), "weights section"));
  uint64_t odd = 65;
  CHECK(contains(edited(file, 40, &odd, 8), "not a multiple of 64"));
  // Names are UTF-8 text (Python reads them as str); messages escape what is not.
  ModuleDef m = sample_module();
  m.functions[1].name = "h\xff";
  std::string err = load_error(write_module(m));
  CHECK(contains(err, "function name is not UTF-8 text"));
  std::string bad = write_module(sample_module());
  size_t at = bad.find("neg");  // the op table: an unknown op name with a byte that is not text
  bad[at] = '\x01';
  reseal(bad);
  CHECK(contains(load_error(bad), "unknown op '\\x01eg'"));
}

// A graph of `depth` nested conds.
std::shared_ptr<const Graph> nested(int depth) {
  auto g = std::make_shared<Graph>();
  ValueRef i = g->parameter({{}, DType::Int32});
  if (depth == 0) {
    g->set_outputs({i});
    return g;
  }
  g->set_outputs(g->add_subgraph_op(OpId::cond_, {i, i}, {}, {nested(depth - 1)}));
  return g;
}

void test_depth_limit() {
  for (int depth : {xjx::kMaxSubgraphDepth - 1, xjx::kMaxSubgraphDepth}) {
    ModuleDef m;
    FunctionDef f;
    f.name = "deep";
    f.graph = nested(depth);
    f.inputs = f.outputs = {{{{}, DType::Int32}, false}};
    m.functions.push_back(f);
    std::string err = load_error(write_module(m));
    CHECK((depth < xjx::kMaxSubgraphDepth) == err.empty());
    if (!err.empty()) CHECK(contains(err, "nest 65 deep, more than 64"));
  }
}

void test_host_callback_refused() {
  ModuleDef m;
  auto g = std::make_shared<Graph>();
  ValueRef x = g->parameter({{}, DType::Int32});
  Attrs a;
  a.set("callback_id", int64_t(1));
  g->add(OpId::host_callback_, {x}, a);
  g->set_outputs({x});
  FunctionDef f;
  f.name = "cb";
  f.graph = g;
  f.inputs = f.outputs = {{{{}, DType::Int32}, false}};
  m.functions.push_back(f);
  try {
    write_module(m);
    CHECK(false);
  } catch (const std::invalid_argument& e) {
    CHECK(contains(e.what(), "host_callback"));
  }
}

// Random bit flips, byte edits, length-field edits and truncations of a real file, resealed so
// that the parser (not only the checksum) sees them: each loads or throws FormatError.
void test_mutations() {
  const std::string file = write_module(sample_module());
  std::mt19937_64 rng(13);
  int loaded = 0, refused = 0;
  const char* env = std::getenv("XJAX_EXPORT_MUTATIONS");  // more for a longer run
  const int cases = env ? std::atoi(env) : 3000;
  for (int k = 0; k < cases; ++k) {
    std::string bad = file;
    const size_t body = bad.size() - 8;
    switch (k % 4) {
      case 0: bad[rng() % body] ^= char(1 << (rng() % 8)); break;
      case 1: bad[64 + rng() % (body - 64)] = char(rng()); break;
      case 2: {  // a small count or a huge length somewhere
        size_t at = 64 + rng() % (body - 64 - 8);
        uint64_t v = (rng() % 2) ? rng() % 70 : rng();
        std::memcpy(&bad[at], &v, (rng() % 2) ? 4 : 8);
        break;
      }
      case 3: bad.resize(64 + rng() % (bad.size() - 64)); break;
    }
    if (bad.size() >= 72 && k % 4 != 3) reseal(bad);
    std::string err = load_error(bad, true);
    (err.empty() ? loaded : refused)++;
  }
  std::printf("mutations: %d loaded, %d refused\n", loaded, refused);
  CHECK(refused > cases / 3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-seed") {  // a seed for fuzz_xjx's corpus
    std::string file = write_module(sample_module());
    std::FILE* f = std::fopen((std::string(argv[2]) + "/sample.xjx").c_str(), "wb");
    if (!f) return 1;
    std::fwrite(file.data(), 1, file.size(), f);
    std::fclose(f);
    return 0;
  }
  test_checksum();
  test_round_trip();
  test_header_errors();
  test_hostile_fields();
  test_depth_limit();
  test_host_callback_refused();
  test_mutations();
  return check_report();
}
