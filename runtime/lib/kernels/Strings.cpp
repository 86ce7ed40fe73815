//===- Strings.cpp - Host kernels for tensors of strings --------*- C++ -*-===//
//
// The library kernels that read or write tensors of strings. Generated code
// never touches strings (a std::string is not a fixed-size element), so every
// op on them is one of these steps, on every target: they run on the host,
// through the same registry and KernelContext as the oneDNN kernels.
//
// - "string.normalizer": ONNX StringNormalizer. Stop words are removed
//   (compared after lowercasing unless `is_case_sensitive` is 1), then the
//   rest are lowercased or uppercased (`case_change_action`). The output's
//   last dimension depends on the values, so the output is a Host buffer
//   that gets its shape here (KernelContext::setStringOutput).
// - "string.cast": ONNX Cast between strings and numbers, in the direction
//   the operand types give.
// - "string.copy": a copy of strings under another shape (the plan's
//   reshapes and identities of strings, which cannot be views of the arena).
//
// Text is UTF-8. Case changes map each code point with the C library's
// towlower_l/towupper_l under the step's `locale` (ONNX's default
// "en_US"), falling back to the C.UTF-8 locale when that one is not
// installed, and to ASCII-only mapping when neither is.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "strata/Runtime/Utf8.h"

#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cwctype>
#include <limits>
#include <locale.h>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace strata::rt::kernels {

namespace {

void checkArity(KernelContext &ctx, size_t inputs, size_t outputs) {
  if (ctx.numInputs() != inputs || ctx.numOutputs() != outputs)
    throw ctx.error("expects " + std::to_string(inputs) + " input(s) and " +
                    std::to_string(outputs) + " output(s), got " +
                    std::to_string(ctx.numInputs()) + " and " +
                    std::to_string(ctx.numOutputs()));
}

const std::string *stringsOf(KernelContext &ctx, const TensorView &view,
                             const char *what) {
  if (view.dtype != DType::String)
    throw ctx.error(std::string(what) + " must be a tensor of strings, got " +
                    dtypeName(view.dtype) + shapeToString(view.shape));
  return view.as<std::string>();
}

/// `s` with quotes, shortened for messages.
std::string quoted(const std::string &s) {
  return "'" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "'";
}

//===----------------------------------------------------------------------===//
// UTF-8 and case mapping
//===----------------------------------------------------------------------===//

void encodeUtf8(const std::u32string &cps, std::string &out) {
  out.clear();
  for (char32_t cp : cps)
    utf8::append(out, cp);
}

/// Locales by name, freed when the process ends (so leak checkers see no
/// leak).
struct LocaleCache : std::unordered_map<std::string, locale_t> {
  ~LocaleCache() {
    for (auto &entry : *this)
      if (entry.second)
        freelocale(entry.second);
  }
};

/// The locale for case mapping, by name; (locale_t)0 when none of the
/// candidates exists (then mapping is ASCII-only). Locales are created once
/// per process and name, and kept: they are small and few.
locale_t caseLocale(const std::string &requested) {
  static std::mutex mutex;
  static LocaleCache cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(requested);
  if (it != cache.end())
    return it->second;
  std::vector<std::string> candidates;
  if (!requested.empty()) {
    // ONNX names locales like "en_US"; glibc needs the encoding.
    if (requested.find('.') == std::string::npos)
      candidates.push_back(requested + ".UTF-8");
    candidates.push_back(requested);
  }
  candidates.push_back("C.UTF-8");
  candidates.push_back("C.utf8");
  locale_t found = static_cast<locale_t>(0);
  for (const std::string &name : candidates)
    if ((found =
             newlocale(LC_CTYPE_MASK, name.c_str(), static_cast<locale_t>(0))))
      break;
  cache.emplace(requested, found);
  return found;
}

enum class CaseChange { None, Lower, Upper };

char32_t mapCase(char32_t cp, CaseChange change, locale_t locale) {
  if (change == CaseChange::None)
    return cp;
  if (!locale) {
    if (change == CaseChange::Lower && cp >= 'A' && cp <= 'Z')
      return cp + ('a' - 'A');
    if (change == CaseChange::Upper && cp >= 'a' && cp <= 'z')
      return cp - ('a' - 'A');
    return cp;
  }
  // glibc's wchar_t is UTF-32.
  auto wc = static_cast<wint_t>(cp);
  wint_t mapped = change == CaseChange::Lower ? towlower_l(wc, locale)
                                              : towupper_l(wc, locale);
  return static_cast<char32_t>(mapped);
}

/// `s` with its case changed; throws (naming the element) on invalid UTF-8.
std::string changeCase(KernelContext &ctx, const std::string &s,
                       CaseChange change, locale_t locale, int64_t index) {
  if (change == CaseChange::None)
    return s;
  std::u32string cps;
  if (!utf8::decode(s, cps))
    throw ctx.error("element " + std::to_string(index) + " (" + quoted(s) +
                    ") is not valid UTF-8");
  for (char32_t &cp : cps)
    cp = mapCase(cp, change, locale);
  std::string out;
  encodeUtf8(cps, out);
  return out;
}

//===----------------------------------------------------------------------===//
// string.normalizer
//===----------------------------------------------------------------------===//

void normalizer(KernelContext &ctx) {
  checkArity(ctx, 1, 1);
  const TensorView &in = ctx.input(0);
  const std::string *x = stringsOf(ctx, in, "the input");
  stringsOf(ctx, ctx.output(0), "the output");
  if (!(in.shape.size() == 1 || (in.shape.size() == 2 && in.shape[0] == 1)))
    throw ctx.error("takes a [C] or [1, C] tensor of strings, got " +
                    shapeToString(in.shape));

  std::string action = ctx.hasAttr("case_change_action")
                           ? ctx.attrString("case_change_action")
                           : "NONE";
  CaseChange change;
  if (action == "NONE")
    change = CaseChange::None;
  else if (action == "LOWER")
    change = CaseChange::Lower;
  else if (action == "UPPER")
    change = CaseChange::Upper;
  else
    throw ctx.error("case_change_action must be NONE, LOWER or UPPER, got " +
                    quoted(action));
  bool caseSensitive =
      ctx.hasAttr("is_case_sensitive") && ctx.attrInt("is_case_sensitive");
  std::string localeName =
      ctx.hasAttr("locale") ? ctx.attrString("locale") : "en_US";
  locale_t locale = caseLocale(localeName);
  static const std::vector<std::string> none;
  const std::vector<std::string> &stopwords =
      ctx.hasAttr("stopwords") ? ctx.attrStrings("stopwords") : none;

  // Case-insensitive matching compares lowercased forms.
  std::unordered_set<std::string> stop;
  for (const std::string &word : stopwords)
    stop.insert(caseSensitive
                    ? word
                    : changeCase(ctx, word, CaseChange::Lower, locale, -1));
  std::vector<std::string> kept;
  int64_t count = in.numElements();
  for (int64_t i = 0; i < count; ++i) {
    if (!stop.empty()) {
      const std::string &key =
          caseSensitive ? x[i]
                        : changeCase(ctx, x[i], CaseChange::Lower, locale, i);
      if (stop.count(key))
        continue;
    }
    kept.push_back(changeCase(ctx, x[i], change, locale, i));
  }
  // An input whose elements are all stop words gives one empty string
  // (ONNX), keeping the rank.
  if (kept.empty())
    kept.emplace_back();
  std::vector<int64_t> shape = in.shape;
  shape.back() = static_cast<int64_t>(kept.size());
  ctx.setStringOutput(0, std::move(shape), std::move(kept));
}

//===----------------------------------------------------------------------===//
// string.cast
//===----------------------------------------------------------------------===//

/// Numbers as text: the shortest form that reads back to the same value
/// (std::to_chars; what numpy's str() of a float32 gives for the ONNX test
/// data), with ONNX's spellings of the special values.
template <typename T> std::string formatNumber(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(value))
      return "NaN";
    if (std::isinf(value))
      return value > 0 ? "INF" : "-INF";
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

/// Parses a floating-point number: plain and scientific notation, an
/// optional sign, and ONNX's reserved "NaN", "INF", "+INF", "-INF" in any
/// case (also "infinity"). Surrounding blanks are ignored. Values beyond the
/// type's range become infinities (as strtod does).
template <typename T> bool parseFloat(std::string_view text, T &value) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text[0])))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  bool negative = false;
  std::string_view body = text;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (equalsIgnoringCase(body, "nan")) {
    value = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  if (equalsIgnoringCase(body, "inf") || equalsIgnoringCase(body, "infinity")) {
    value = negative ? -std::numeric_limits<T>::infinity()
                     : std::numeric_limits<T>::infinity();
    return true;
  }
  // from_chars takes no sign of its own beyond '-', and no "0x" forms in
  // general format: both are refused like any other junk.
  if (body.empty() || body[0] == '+' || body[0] == '-')
    return false;
  T parsed{};
  auto [end, ec] =
      std::from_chars(body.data(), body.data() + body.size(), parsed);
  if (end != body.data() + body.size())
    return false;
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow; strtod under the C locale tells which (it
    // gives HUGE_VAL or a value near 0) without depending on the process's
    // LC_NUMERIC.
    static locale_t cLocale =
        newlocale(LC_NUMERIC_MASK, "C", static_cast<locale_t>(0));
    if (!cLocale)
      return false;
    std::string copy(body);
    double wide = strtod_l(copy.c_str(), nullptr, cLocale);
    parsed = std::fabs(wide) >= 1 ? std::numeric_limits<T>::infinity() : T(0);
  } else if (ec != std::errc()) {
    return false;
  }
  value = negative ? -parsed : parsed;
  return true;
}

/// Parses an integer; text with a fraction or exponent is read as a float
/// and truncated toward zero (ONNX: "100.5" may give 100). False when the
/// text is not a number or the value does not fit T.
template <typename T> bool parseInteger(std::string_view text, T &value) {
  std::string_view trimmed = text;
  while (!trimmed.empty() &&
         std::isspace(static_cast<unsigned char>(trimmed[0])))
    trimmed.remove_prefix(1);
  while (!trimmed.empty() &&
         std::isspace(static_cast<unsigned char>(trimmed.back())))
    trimmed.remove_suffix(1);
  std::string_view digits = trimmed;
  if (!digits.empty() && digits[0] == '+')
    digits.remove_prefix(1);
  if (!digits.empty() && digits[0] != '+') {
    auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && end == digits.data() + digits.size())
      return true;
    if (ec == std::errc::result_out_of_range)
      return false;
  }
  double wide;
  if (!parseFloat(trimmed, wide) || !std::isfinite(wide))
    return false;
  wide = std::trunc(wide);
  if (wide < static_cast<double>(std::numeric_limits<T>::min()) ||
      wide >= static_cast<double>(std::numeric_limits<T>::max()) + 1.0)
    return false;
  value = static_cast<T>(wide);
  return true;
}

template <typename T>
void numbersToStrings(const TensorView &in, std::vector<std::string> &out) {
  const T *x = in.as<T>();
  int64_t count = in.numElements();
  out.resize(count);
  for (int64_t i = 0; i < count; ++i)
    out[i] = formatNumber(x[i]);
}

template <typename T>
void stringsToNumbers(KernelContext &ctx, const std::string *x,
                      const TensorView &out) {
  T *y = out.as<T>();
  int64_t count = out.numElements();
  for (int64_t i = 0; i < count; ++i) {
    bool ok;
    if constexpr (std::is_floating_point_v<T>)
      ok = parseFloat(x[i], y[i]);
    else
      ok = parseInteger(x[i], y[i]);
    if (!ok)
      throw ctx.error("element " + std::to_string(i) + " (" + quoted(x[i]) +
                      ") is not a number of type " + dtypeName(out.dtype));
  }
}

void cast(KernelContext &ctx) {
  checkArity(ctx, 1, 1);
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  bool fromString = in.dtype == DType::String;
  bool toString = out.dtype == DType::String;
  if (fromString == toString)
    throw ctx.error(std::string("casts between strings and numbers, got ") +
                    dtypeName(in.dtype) + " -> " + dtypeName(out.dtype));
  auto unsupported = [&](DType type) {
    return ctx.error(std::string("cannot cast strings to or from ") +
                     dtypeName(type) +
                     " (it takes f32, f64 and 8- to 64-bit integers)");
  };
  if (toString) {
    std::vector<std::string> values;
    if (!dispatchNumeric(in.dtype, [&](auto tag) {
          numbersToStrings<decltype(tag)>(in, values);
        }))
      throw unsupported(in.dtype);
    ctx.setStringOutput(0, in.shape, std::move(values));
    return;
  }
  if (in.shape != out.shape)
    throw ctx.error("casts string" + shapeToString(in.shape) + " to " +
                    dtypeName(out.dtype) + shapeToString(out.shape) +
                    " (the shapes differ)");
  const std::string *x = in.as<std::string>();
  if (!dispatchNumeric(out.dtype, [&](auto tag) {
        stringsToNumbers<decltype(tag)>(ctx, x, out);
      }))
    throw unsupported(out.dtype);
}

//===----------------------------------------------------------------------===//
// string.copy
//===----------------------------------------------------------------------===//

void copyStrings(KernelContext &ctx) {
  checkArity(ctx, 1, 1);
  const TensorView &in = ctx.input(0), &out = ctx.output(0);
  const std::string *x = stringsOf(ctx, in, "the input");
  stringsOf(ctx, out, "the output");
  int64_t count = in.numElements();
  // An output with run-time dimensions takes the input's shape (an
  // identity); a static one is a reshape of as many elements.
  bool dynamic = false;
  for (int64_t d : out.shape)
    dynamic |= d < 0;
  std::vector<int64_t> shape = dynamic ? in.shape : out.shape;
  if (rt::numElements(shape) != count)
    throw ctx.error("copies string" + shapeToString(in.shape) + " to string" +
                    shapeToString(out.shape) + " (element counts differ)");
  ctx.setStringOutput(0, std::move(shape),
                      std::vector<std::string>(x, x + count));
}

} // namespace

void registerStringKernels(
    const std::function<void(const std::string &, KernelFn)> &add) {
  add("string.normalizer", normalizer);
  add("string.cast", cast);
  add("string.copy", copyStrings);
}

} // namespace strata::rt::kernels
