// Writes a ModuleDef as an .xjx file (layout: docs/format.md). Graphs are written children first,
// so every subgraph index is smaller than the index of the graph that uses it; each use of a
// subgraph is its own graph (no sharing), so reading a file never costs more than its size.
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/export/format.h"
#include "core/size.h"

namespace xjax {

namespace {

class Encoder {
 public:
  void u8(uint8_t v) { out_.push_back(char(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  void count(size_t n) {
    if (n > UINT32_MAX) throw ValueError("[export] more than 2^32 - 1 items in one list");
    u32(uint32_t(n));
  }
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string& bytes() { return out_; }

 private:
  std::string out_;  // little-endian: the byte order of every machine the core builds for
};

// Names of ops and dtypes in the order first used: the file refers to them by position.
class NameTable {
 public:
  uint32_t index(const std::string& name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    names_.push_back(name);
    return ids_[name] = uint32_t(names_.size() - 1);
  }
  void write(Encoder& e) const {
    e.count(names_.size());
    for (const auto& n : names_) e.str(n);
  }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> ids_;
};

class ModuleWriter {
 public:
  std::string program(const ModuleDef& m) {
    std::map<const Graph*, uint32_t> roots;
    std::vector<uint32_t> fn_graph;
    for (const FunctionDef& f : m.functions) {
      if (!f.graph) throw ValueError("[export] function '" + f.name + "' has no graph");
      auto it = roots.find(f.graph.get());
      if (it == roots.end()) it = roots.emplace(f.graph.get(), write_graph(*f.graph)).first;
      fn_graph.push_back(it->second);
    }
    Encoder body;  // weights and functions, written before the tables so that they know every dtype
    body.count(m.weights.size());
    uint64_t offset = 0;
    for (const Array& w : m.weights) {
      write_type(body, {w.shape, w.dtype});
      body.u64(offset);
      body.u64(w.nbytes());
      offset += (w.nbytes() + xjx::kWeightAlignment - 1) / xjx::kWeightAlignment * xjx::kWeightAlignment;
    }
    weights_bytes_ = offset;
    body.count(m.functions.size());
    for (size_t i = 0; i < m.functions.size(); ++i) write_function(body, m.functions[i], fn_graph[i], m);
    Encoder e;
    e.str(m.producer);
    ops_.write(e);
    dtypes_.write(e);
    e.count(num_graphs_);
    e.raw(graphs_.bytes().data(), graphs_.bytes().size());
    e.raw(body.bytes().data(), body.bytes().size());
    return std::move(e.bytes());
  }
  uint64_t weights_bytes() const { return weights_bytes_; }

 private:
  void write_type(Encoder& e, const TypeInfo& t) {
    e.u32(dtypes_.index(dtype_name(t.dtype)));
    e.count(t.shape.size());
    for (int64_t d : t.shape) e.i64(d);
  }

  void write_attr(Encoder& e, const AttrValue& v) {
    if (auto* i = std::get_if<int64_t>(&v)) {
      e.u8(uint8_t(xjx::AttrTag::Int));
      e.i64(*i);
    } else if (auto* d = std::get_if<double>(&v)) {
      e.u8(uint8_t(xjx::AttrTag::Float));
      e.f64(*d);
    } else if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
      e.u8(uint8_t(xjx::AttrTag::Ints));
      e.count(l->size());
      for (int64_t x : *l) e.i64(x);
    } else {
      e.u8(uint8_t(xjx::AttrTag::String));
      e.str(std::get<std::string>(v));
    }
  }

  // Writes g (after its subgraphs) and returns its index.
  uint32_t write_graph(const Graph& g) {
    std::vector<std::vector<uint32_t>> subs(g.nodes().size());
    for (size_t i = 0; i < g.nodes().size(); ++i)
      for (const auto& s : g.nodes()[i].subgraphs) subs[i].push_back(write_graph(*s));
    Encoder& e = graphs_;
    e.count(g.nodes().size());
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      const Node& n = g.nodes()[i];
      if (n.op == OpId::host_callback_)
        throw ValueError("[export] the graph calls back into the host (host_callback): it cannot run from a file");
      e.u32(ops_.index(op_name(n.op)));
      e.count(n.inputs.size());
      for (ValueRef v : n.inputs) {
        e.u32(uint32_t(v.node));
        e.u32(uint32_t(v.index));
      }
      e.count(n.outputs.size());
      for (const TypeInfo& t : n.outputs) write_type(e, t);
      const bool param = n.op == OpId::parameter_;  // its one attribute (index) is implied by its position
      e.count(param ? 0 : n.attrs.items().size());
      if (!param) {
        for (const auto& [name, v] : n.attrs.items()) {
          e.str(name);
          write_attr(e, v);
        }
      }
      e.count(subs[i].size());
      for (uint32_t s : subs[i]) e.u32(s);
    }
    e.count(g.outputs().size());
    for (ValueRef v : g.outputs()) {
      e.u32(uint32_t(v.node));
      e.u32(uint32_t(v.index));
    }
    return num_graphs_++;
  }

  void write_specs(Encoder& e, const std::vector<ArgSpec>& specs) {
    e.count(specs.size());
    for (const ArgSpec& s : specs) {
      write_type(e, s.type);
      e.u8(s.weak ? 1 : 0);
    }
  }

  void write_function(Encoder& e, const FunctionDef& f, uint32_t graph, const ModuleDef& m) {
    for (int64_t w : f.weights)
      if (w < 0 || w >= int64_t(m.weights.size()))
        throw ValueError("[export] function '" + f.name + "' refers to weight " + std::to_string(w) + " of " +
                         std::to_string(m.weights.size()));
    e.str(f.name);
    e.u32(graph);
    write_specs(e, f.inputs);
    write_specs(e, f.outputs);
    e.count(f.weights.size());
    for (int64_t w : f.weights) e.u32(uint32_t(w));
    e.str(f.in_tree);
    e.str(f.out_tree);
  }

  NameTable ops_, dtypes_;
  Encoder graphs_;
  uint32_t num_graphs_ = 0;
  uint64_t weights_bytes_ = 0;
};

size_t align_up(size_t n) { return (n + xjx::kWeightAlignment - 1) / xjx::kWeightAlignment * xjx::kWeightAlignment; }

void put64(std::string& out, size_t at, uint64_t v) { std::memcpy(&out[at], &v, 8); }
void put32(std::string& out, size_t at, uint32_t v) { std::memcpy(&out[at], &v, 4); }

}  // namespace

std::string write_module(const ModuleDef& m) {
  ModuleWriter w;
  std::string program = w.program(m);
  const size_t program_offset = xjx::kHeaderBytes;
  const size_t weights_offset = align_up(program_offset + program.size());
  const size_t weights_size = w.weights_bytes();
  const size_t file_size = weights_offset + weights_size + xjx::kTrailerBytes;

  std::string out(file_size, '\0');
  std::memcpy(&out[0], xjx::kMagic, 8);
  put32(out, 8, m.format_version);
  put32(out, 12, m.opset_version);
  put64(out, 16, file_size);
  put64(out, 24, program_offset);
  put64(out, 32, program.size());
  put64(out, 40, weights_offset);
  put64(out, 48, weights_size);
  std::memcpy(&out[program_offset], program.data(), program.size());
  size_t at = weights_offset;
  for (const Array& a : m.weights) {
    a.wait();
    if (!a.buffer_matches()) throw ValueError("[export] a weight has no buffer of its size");
    if (a.nbytes()) std::memcpy(&out[at], a.data(), a.nbytes());
    at += align_up(a.nbytes());
  }
  put64(out, file_size - xjx::kTrailerBytes, checksum(out.data(), file_size - xjx::kTrailerBytes));
  return out;
}

}  // namespace xjax
