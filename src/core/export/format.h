// The .xjx file format (docs/format.md): a versioned, checksummed container of named functions,
// each an unoptimised graph plus its signature, and the weights they close over, stored once in a
// 64-byte-aligned section that a loader maps without copying. One struct (ModuleDef) is what the
// writer takes and what the reader gives back.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/graph.h"
#include "xjax/errors.h"  // FormatError: a file that cannot be read (Python: ValueError)

namespace xjax {

namespace xjx {

// "\x89XJX\r\n\x1a\n": a non-ASCII first byte, then line endings that text-mode transfers mangle.
constexpr char kMagic[8] = {'\x89', 'X', 'J', 'X', '\r', '\n', '\x1a', '\n'};
// The layout of the file. A reader reads exactly its own version.
constexpr uint32_t kFormatVersion = 1;
// The meaning of the ops (names, operands, attributes). Bumped when an op changes incompatibly; a
// reader reads files of its opset and older ones.
constexpr uint32_t kOpsetVersion = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kTrailerBytes = 8;  // the checksum
constexpr size_t kWeightAlignment = 64;

// Limits on what a file may ask of the reader (beyond being within the file's own bytes).
constexpr uint32_t kMaxRank = 64;
constexpr int kMaxSubgraphDepth = 64;
constexpr uint64_t kMaxNameBytes = 4096;

// Attribute value tags.
enum class AttrTag : uint8_t { Int = 1, Float = 2, Ints = 3, String = 4 };

}  // namespace xjx

// One argument or result of a function: its type and whether it is weakly typed (a Python scalar).
struct ArgSpec {
  TypeInfo type;
  bool weak = false;
  bool operator==(const ArgSpec& o) const { return type == o.type && weak == o.weak; }
};

// One named function: a graph whose parameters are the inputs, then the weights it closes over.
// Its outputs are the results in order (a value may be returned twice).
struct FunctionDef {
  std::string name;
  std::shared_ptr<const Graph> graph;
  std::vector<ArgSpec> inputs;
  std::vector<ArgSpec> outputs;
  std::vector<int64_t> weights;  // per weight parameter: its index in ModuleDef::weights
  std::string in_tree;           // the pytree structures, in the Python side's notation
  std::string out_tree;
};

struct ModuleDef {
  std::vector<FunctionDef> functions;
  std::vector<Array> weights;  // read: read-only arrays over the file's bytes (no copy)
  std::string producer;        // who wrote the file (e.g. "xjax 0.1.0")
  uint32_t format_version = xjx::kFormatVersion;
  uint32_t opset_version = xjx::kOpsetVersion;
};

// What the reader allows beyond the file's own bounds.
struct ReadOptions {
  bool verify_checksum = true;
  bool map_file = true;  // read_module_file: map the file (weights used in place), else read it into memory
  // The largest value (in bytes) any graph may declare, and the sum of its constants: a file
  // cannot make loading allocate more than this.
  int64_t max_array_bytes = int64_t(1) << 34;
};

// The file's bytes. Throws ValueError for a graph the format cannot hold (a host callback).
std::string write_module(const ModuleDef& module);

// Parses and checks a file held in memory. `owner` keeps [data, data + size) alive; the weights'
// buffers point into it (data should be 64-byte aligned). Throws FormatError.
ModuleDef read_module(const void* data, size_t size, std::shared_ptr<const void> owner,
                      const ReadOptions& options = {});
// Maps the file (read-only, no copy; or reads it into memory: options.map_file) and reads it.
// Throws FormatError, or std::runtime_error when the file cannot be opened.
ModuleDef read_module_file(const std::string& path, const ReadOptions& options = {});
// Copies the bytes into aligned memory and reads them.
ModuleDef read_module_bytes(const void* data, size_t size, const ReadOptions& options = {});

// XXH64 (seed 0) of the bytes: the file's checksum (of everything before the trailer).
uint64_t checksum(const void* data, size_t size);

}  // namespace xjax
