//===- JsonReport.cpp - The conformance JSON report -------------*- C++ -*-===//
//
// Writes the per-case results of a conformance run as JSON for CI and for
// diffing between runs. Messages carry file names and tensor values from
// arbitrary input, so strings are escaped completely: quotes, backslashes and
// control characters, and bytes that are not valid UTF-8 are replaced with
// U+FFFD, because a JSON document must be UTF-8 and one bad byte would make
// the whole report unreadable.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include <cmath>
#include <cstdio>

using namespace strata::tio;

namespace {
/// The length of the valid UTF-8 sequence at \p s[i], or 0 if invalid
/// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len;
  uint32_t cp;
  if (c < 0x80)
    return 1;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}
} // namespace

const char *strata::tio::caseStatusName(CaseStatus status) {
  switch (status) {
  case CaseStatus::Passed:
    return "passed";
  case CaseStatus::Failed:
    return "failed";
  case CaseStatus::Error:
    return "error";
  case CaseStatus::ExpectedFailure:
    return "expected-failure";
  }
  return "error";
}

std::string strata::tio::jsonQuote(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = utf8SequenceLength(text, i);
    if (len == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (len > 1) {
      out.append(text.substr(i, len));
      i += len;
      continue;
    }
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    ++i;
  }
  return out + "\"";
}

std::string
strata::tio::formatJsonReport(const std::vector<CaseResult> &results) {
  size_t counts[4] = {0, 0, 0, 0};
  for (const CaseResult &r : results)
    ++counts[static_cast<size_t>(r.status)];
  std::string out = "{\n  \"summary\": {";
  for (CaseStatus status : {CaseStatus::Passed, CaseStatus::Failed,
                            CaseStatus::Error, CaseStatus::ExpectedFailure})
    out += jsonQuote(caseStatusName(status)) + ": " +
           std::to_string(counts[static_cast<size_t>(status)]) + ", ";
  out += "\"total\": " + std::to_string(results.size()) + "},\n";
  out += "  \"cases\": [";
  for (size_t i = 0; i < results.size(); ++i) {
    const CaseResult &r = results[i];
    // JSON has no NaN or infinity; a broken timer must not break the file.
    char time[32] = "null";
    if (std::isfinite(r.seconds))
      std::snprintf(time, sizeof(time), "%.6f", r.seconds);
    out += i ? ",\n    " : "\n    ";
    out += "{\"name\": " + jsonQuote(r.name) +
           ", \"status\": " + jsonQuote(caseStatusName(r.status)) +
           ", \"message\": " + jsonQuote(r.message) + ", \"time\": " + time +
           "}";
  }
  out += results.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

void strata::tio::writeJsonReport(const std::string &path,
                                  const std::vector<CaseResult> &results) {
  std::string text = formatJsonReport(results);
  detail::writeFileBytes(path, text.data(), text.size());
}
