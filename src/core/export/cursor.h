// Bounds-checked reading of the little-endian fields of an .xjx file: every read checks the bytes
// left first, every count is checked against the bytes its items need before anything is
// allocated for them, and every failure is a FormatError naming what was read, where, and in what.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/export/format.h"

namespace xjax::xjx {

class Cursor {
 public:
  // [data, data + size) is the section read; `base` is its offset in the file (for messages).
  Cursor(const unsigned char* data, size_t size, size_t base) : p_(data), size_(size), base_(base) {}

  // What is being read ("graph 3, node 7 (mul)"): the prefix of every error.
  std::string context;

  size_t left() const { return size_ - pos_; }
  size_t offset() const { return base_ + pos_; }

  uint8_t u8(const char* what) { return fixed<uint8_t>(what); }
  uint32_t u32(const char* what) { return fixed<uint32_t>(what); }
  uint64_t u64(const char* what) { return fixed<uint64_t>(what); }
  int64_t i64(const char* what) { return fixed<int64_t>(what); }
  double f64(const char* what) { return fixed<double>(what); }

  // A u32 count of items that take at least `min_item_bytes` each (>= 1): the items must fit in
  // what is left, so a hostile count cannot make the reader allocate or loop beyond the file.
  uint32_t count(const char* what, size_t min_item_bytes) {
    size_t at = offset();
    uint32_t n = u32(what);
    if (uint64_t(n) * min_item_bytes > left())
      fail_at(at, std::string(what) + " is " + std::to_string(n) + ", but the " + std::to_string(left()) +
                      " bytes left hold at most " + std::to_string(left() / min_item_bytes));
    return n;
  }

  // A u64 length, then that many bytes; at most max_bytes.
  std::string str(const char* what, uint64_t max_bytes = UINT64_MAX) {
    size_t at = offset();
    uint64_t n = u64(what);
    if (n > max_bytes)
      fail_at(at, std::string(what) + " is " + std::to_string(n) + " bytes long, more than the " +
                      std::to_string(max_bytes) + " allowed");
    need(n, what, at);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), size_t(n));
    pos_ += size_t(n);
    return s;
  }

  // A str that must be UTF-8 text (names, pytree structures): Python reads these as str.
  std::string text(const char* what, uint64_t max_bytes = UINT64_MAX) {
    size_t at = offset();
    std::string s = str(what, max_bytes);
    if (!valid_utf8(s)) fail_at(at, std::string(what) + " is not UTF-8 text");
    return s;
  }

  [[noreturn]] void fail(const std::string& msg) const { fail_at(offset(), msg); }
  [[noreturn]] void fail_at(size_t at, const std::string& msg) const {
    throw FormatError(escaped("[xjx] " + (context.empty() ? "" : context + ": ") + msg + " (at byte " +
                              std::to_string(at) + ")"));
  }

  // The message with bytes that are not UTF-8 text (names read from a hostile file) as \xNN.
  static std::string escaped(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      size_t len = utf8_length(s, i);
      if (len) {
        out.append(s, i, len);
        i += len;
      } else {
        char buf[5];
        std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(static_cast<unsigned char>(s[i++])));
        out += buf;
      }
    }
    return out;
  }

 private:
  // The length of the UTF-8 character at s[i] (printable: no control characters), or 0.
  static size_t utf8_length(const std::string& s, size_t i) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const unsigned char c = p[i];
    if (c < 0x80) return (c >= 0x20 && c != 0x7f) || c == '\n' ? 1 : 0;
    size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    uint32_t cp = c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    // Overlong forms, surrogates and values beyond U+10FFFF are not UTF-8.
    const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
  }
  static bool valid_utf8(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
      size_t len = utf8_length(s, i);
      if (!len && s[i] != '\t' && s[i] != '\r') return false;
      i += len ? len : 1;
    }
    return true;
  }
  void need(uint64_t n, const char* what, size_t at) const {
    if (n > left())
      fail_at(at, std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
                      std::to_string(left()) + " left");
  }
  template <typename T>
  T fixed(const char* what) {
    need(sizeof(T), what, offset());
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  const unsigned char* p_;
  size_t size_;
  size_t base_;
  size_t pos_ = 0;
};

}  // namespace xjax::xjx
