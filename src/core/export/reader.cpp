// Reading an .xjx file: the header (magic, versions, section bounds, checksum), the name tables,
// the weights (buffers over the file's bytes) and the functions (signatures checked against their
// graphs). The file is untrusted: see cursor.h.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "core/export/reader.h"
#include "core/size.h"

namespace xjax {

namespace xjx {
namespace {

uint64_t get64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t get32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

[[noreturn]] void fail(const std::string& msg) { throw FormatError("[xjx] " + msg); }

struct Sections {
  uint64_t program_offset, program_size, weights_offset, weights_size;
};

// Magic, versions (before anything else: a newer layout may put the rest elsewhere), sizes.
Sections read_header(const unsigned char* p, size_t size, const ReadOptions& options, ModuleDef& m) {
  if (size < 8 || std::memcmp(p, kMagic, 8) != 0) fail("not an .xjx file: the magic bytes are wrong");
  if (size < kHeaderBytes + kTrailerBytes)
    fail("truncated: the file is " + std::to_string(size) + " bytes, a header and checksum need " +
         std::to_string(kHeaderBytes + kTrailerBytes));
  m.format_version = get32(p + 8);
  m.opset_version = get32(p + 12);
  if (m.format_version != kFormatVersion)
    fail("the file has format version " + std::to_string(m.format_version) + ", this reader reads version " +
         std::to_string(kFormatVersion) + " (opsets up to " + std::to_string(kOpsetVersion) + ")");
  if (m.opset_version > kOpsetVersion || m.opset_version == 0)
    fail("the file needs opset " + std::to_string(m.opset_version) + " (format version " +
         std::to_string(m.format_version) + "), this reader implements opsets 1 to " + std::to_string(kOpsetVersion) +
         ": a newer xjax reads it");
  const uint64_t file_size = get64(p + 16);
  if (file_size != size)
    fail(std::string(file_size > size ? "truncated" : "trailing bytes") + ": the header says " +
         std::to_string(file_size) + " bytes, the file has " + std::to_string(size));
  Sections s{get64(p + 24), get64(p + 32), get64(p + 40), get64(p + 48)};
  if (get64(p + 56) != 0) fail("the reserved header bytes 56..63 are not zero");
  const uint64_t body_end = size - kTrailerBytes;
  if (s.program_offset < kHeaderBytes || s.program_offset > body_end || s.program_size > body_end - s.program_offset)
    fail("the program section [" + std::to_string(s.program_offset) + ", +" + std::to_string(s.program_size) +
         ") is not within the file body [64, " + std::to_string(body_end) + ")");
  if (s.weights_offset % kWeightAlignment != 0)
    fail("the weights section starts at " + std::to_string(s.weights_offset) + ", not a multiple of 64");
  if (s.weights_offset < s.program_offset + s.program_size || s.weights_offset > body_end ||
      s.weights_size > body_end - s.weights_offset)
    fail("the weights section [" + std::to_string(s.weights_offset) + ", +" + std::to_string(s.weights_size) +
         ") is not within the file body after the program section");
  if (options.verify_checksum) {
    uint64_t want = get64(p + body_end), got = checksum(p, body_end);
    if (want != got) fail("checksum mismatch: the file is corrupt (stored " + std::to_string(want) +
                          ", computed " + std::to_string(got) + ")");
  }
  return s;
}

Tables read_tables(Cursor& c) {
  Tables t;
  c.context = "op table";
  uint32_t n = c.count("op count", 8);
  for (uint32_t i = 0; i < n; ++i) {
    size_t at = c.offset();
    std::string name = c.str("op name", kMaxNameBytes);
    try {
      t.ops.push_back(op_from_name(name));
    } catch (const std::exception&) {
      c.fail_at(at, "unknown op '" + name + "' (not in this xjax's opset " + std::to_string(kOpsetVersion) + ")");
    }
  }
  c.context = "dtype table";
  n = c.count("dtype count", 8);
  for (uint32_t i = 0; i < n; ++i) {
    size_t at = c.offset();
    std::string name = c.str("dtype name", kMaxNameBytes);
    try {
      t.dtypes.push_back(dtype_from_name(name));
    } catch (const std::exception&) {
      c.fail_at(at, "unknown dtype '" + name + "'");
    }
  }
  return t;
}

void read_weights(Cursor& c, const Tables& t, const unsigned char* section, const Sections& s,
                  const std::shared_ptr<const void>& owner, ModuleDef& m) {
  c.context = "weight list";
  uint32_t n = c.count("weight count", 24);
  for (uint32_t i = 0; i < n; ++i) {
    c.context = "weight " + std::to_string(i);
    size_t at = c.offset();
    TypeInfo type = read_type(c, t, kMaxArrayBytes);
    uint64_t offset = c.u64("weight offset");
    uint64_t nbytes = c.u64("weight size");
    const int64_t want = checked_size(type.shape, type.dtype, "xjx").bytes;
    if (nbytes != uint64_t(want))
      c.fail_at(at, std::to_string(nbytes) + " bytes, but " + dtype_name(type.dtype) + shape_str(type.shape) +
                        " needs " + std::to_string(want));
    if (offset % kWeightAlignment != 0) c.fail_at(at, "offset " + std::to_string(offset) + " is not a multiple of 64");
    if (offset > s.weights_size || nbytes > s.weights_size - offset)
      c.fail_at(at, "bytes [" + std::to_string(offset) + ", +" + std::to_string(nbytes) +
                        ") are not within the weights section of " + std::to_string(s.weights_size));
    Array a;
    a.shape = type.shape;
    a.dtype = type.dtype;
    a.buffer = Buffer::wrap(section + offset, size_t(nbytes), owner);
    m.weights.push_back(std::move(a));
  }
}

std::vector<ArgSpec> read_specs(Cursor& c, const Tables& t, const ReadOptions& options, const char* what) {
  uint32_t n = c.count(what, 9);
  std::vector<ArgSpec> out(n);
  for (auto& s : out) {
    s.type = read_type(c, t, options.max_array_bytes);
    size_t at = c.offset();
    uint8_t flags = c.u8("flags");
    if (flags > 1) c.fail_at(at, "unknown flags " + std::to_string(flags));
    s.weak = flags == 1;
  }
  return out;
}

std::string specs_str(const std::vector<TypeInfo>& t) { return "[" + types_str(t) + "]"; }

std::vector<TypeInfo> types_of(const std::vector<ArgSpec>& specs) {
  std::vector<TypeInfo> out;
  for (const auto& s : specs) out.push_back(s.type);
  return out;
}

void read_functions(Cursor& c, const Tables& t, const std::vector<std::shared_ptr<const Graph>>& graphs,
                    const ReadOptions& options, ModuleDef& m) {
  c.context = "function list";
  uint32_t n = c.count("function count", 8 + 4 + 4 + 4 + 4 + 8 + 8);
  std::set<std::pair<std::string, std::vector<std::pair<Shape, int>>>> signatures;
  for (uint32_t i = 0; i < n; ++i) {
    c.context = "function " + std::to_string(i);
    FunctionDef f;
    size_t at = c.offset();
    f.name = c.text("function name", kMaxNameBytes);
    c.context = "function '" + f.name + "'";
    at = c.offset();
    uint32_t gi = c.u32("graph");
    if (gi >= graphs.size())
      c.fail_at(at, "graph " + std::to_string(gi) + " does not exist (" + std::to_string(graphs.size()) + " graphs)");
    f.graph = graphs[gi];
    f.inputs = read_specs(c, t, options, "input count");
    f.outputs = read_specs(c, t, options, "output count");
    uint32_t nw = c.count("weight parameter count", 4);
    for (uint32_t k = 0; k < nw; ++k) {
      size_t wat = c.offset();
      uint32_t w = c.u32("weight");
      if (w >= m.weights.size())
        c.fail_at(wat, "weight " + std::to_string(w) + " does not exist (" + std::to_string(m.weights.size()) +
                           " weights)");
      f.weights.push_back(w);
    }
    f.in_tree = c.text("input tree");
    f.out_tree = c.text("output tree");
    // The graph takes the inputs, then the weights; it returns the outputs.
    std::vector<TypeInfo> want = types_of(f.inputs);
    for (int64_t w : f.weights) want.push_back({m.weights[w].shape, m.weights[w].dtype});
    if (f.graph->parameter_types() != want)
      c.fail_at(at, "graph " + std::to_string(gi) + " takes " + specs_str(f.graph->parameter_types()) +
                        ", the inputs and weights are " + specs_str(want));
    if (f.graph->output_types() != types_of(f.outputs))
      c.fail_at(at, "graph " + std::to_string(gi) + " returns " + specs_str(f.graph->output_types()) +
                        ", the outputs are " + specs_str(types_of(f.outputs)));
    // A name may be given several signatures (overloads), each inputs list once.
    std::vector<std::pair<Shape, int>> key;
    for (const ArgSpec& s : f.inputs) key.push_back({s.type.shape, int(s.type.dtype)});
    if (!signatures.insert({f.name, key}).second)
      c.fail_at(at, "a second function '" + f.name + "' with the same inputs " + specs_str(types_of(f.inputs)));
    m.functions.push_back(std::move(f));
  }
}

}  // namespace
}  // namespace xjx

ModuleDef read_module(const void* data, size_t size, std::shared_ptr<const void> owner, const ReadOptions& options) {
  using namespace xjx;
  const auto* p = static_cast<const unsigned char*>(data);
  ModuleDef m;
  Sections s = read_header(p, size, options, m);
  Cursor c(p + s.program_offset, size_t(s.program_size), size_t(s.program_offset));
  m.producer = c.text("producer", kMaxNameBytes);
  Tables t = read_tables(c);
  auto graphs = read_graphs(c, t, options);
  read_weights(c, t, p + s.weights_offset, s, owner, m);
  read_functions(c, t, graphs, options, m);
  c.context.clear();
  if (c.left() != 0) c.fail(std::to_string(c.left()) + " unexpected bytes after the functions");
  return m;
}

namespace {

// A read-only private mapping of a whole file, unmapped when the last weight using it goes.
struct Mapping {
  void* addr = MAP_FAILED;
  size_t size = 0;
  ~Mapping() {
    if (addr != MAP_FAILED) munmap(addr, size);
  }
};

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

ModuleDef read_module_file(const std::string& path, const ReadOptions& options) {
  Fd f{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw std::runtime_error("[xjx] cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(f.fd, &st) != 0) throw std::runtime_error("[xjx] cannot stat '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw FormatError("[xjx] '" + path + "' is not a regular file");
  if (st.st_size == 0) throw FormatError("[xjx] '" + path + "' is empty");
  if (!options.map_file) {  // read into aligned memory at once: the file may change afterwards
    std::shared_ptr<Buffer> copy = Buffer::allocate(size_t(st.st_size));
    size_t done = 0;
    while (done < size_t(st.st_size)) {
      ssize_t n = read(f.fd, static_cast<char*>(copy->data()) + done, size_t(st.st_size) - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("[xjx] cannot read '" + path + "': " + std::strerror(n ? errno : EIO));
      done += size_t(n);
    }
    try {
      return read_module(copy->data(), done, copy, options);
    } catch (const FormatError& e) {
      throw FormatError(std::string(e.what()) + " in '" + path + "'");
    }
  }
  auto map = std::make_shared<Mapping>();
  map->size = size_t(st.st_size);
  // Populated at once: the checksum reads every page anyway, and one call faults them in faster.
  int flags = MAP_PRIVATE | (options.verify_checksum ? MAP_POPULATE : 0);
  map->addr = mmap(nullptr, map->size, PROT_READ, flags, f.fd, 0);
  if (map->addr == MAP_FAILED) throw std::runtime_error("[xjx] cannot map '" + path + "': " + std::strerror(errno));
  try {
    return read_module(map->addr, map->size, map, options);
  } catch (const FormatError& e) {
    throw FormatError(std::string(e.what()) + " in '" + path + "'");
  }
}

ModuleDef read_module_bytes(const void* data, size_t size, const ReadOptions& options) {
  std::shared_ptr<Buffer> copy = Buffer::allocate(size);
  if (size) std::memcpy(copy->data(), data, size);
  return read_module(copy->data(), size, copy, options);
}

}  // namespace xjax
