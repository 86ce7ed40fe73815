//===- Utf8.h - UTF-8 encoding and decoding ----------------------*- C++
//-*-===//
//
// The one UTF-8 codec of strata, header-only so that libraries that do not
// link the runtime (tensorio's .npy strings) share it with the runtime's
// string kernels.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_UTF8_H
#define STRATA_RUNTIME_UTF8_H

#include <string>

namespace strata::utf8 {

/// Decodes UTF-8 into code points; false on a malformed sequence (overlong
/// forms, surrogates and values above U+10FFFF included).
inline bool decode(const std::string &s, std::u32string &out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80             ? 1
                 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (len == 0 || i + len > s.size())
      return false;
    char32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static const char32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minimum[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    out.push_back(cp);
    i += len;
  }
  return true;
}

/// Appends the UTF-8 form of the code point `cp` (at most U+10FFFF).
inline void append(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

} // namespace strata::utf8

#endif // STRATA_RUNTIME_UTF8_H
