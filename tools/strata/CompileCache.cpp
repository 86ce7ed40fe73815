//===- CompileCache.cpp - the compile cache ---------------------*- C++ -*-===//
//
// The cache (see compileOnnx in Driver.h, and docs/cli.md) is designed so
// that a hit costs little more than reading two files: the key is computed
// from the input file's bytes and the command line alone, the module is
// checked against the SHA-256 its manifest records, and no MLIR context is
// created. The manifest lists the key's parts one by one so that a miss can
// be explained: `--explain-cache` compares them with the entries for the
// same model.
//
//===----------------------------------------------------------------------===//

#include "CacheManifest.h"
#include "Driver.h"
#include "Version.h"

#include "strata/Plugin/Loader.h"
#include "strata/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <set>
#include <tuple>

namespace strata::driver {

std::string cacheDirectory() {
  if (const char *dir = std::getenv("STRATA_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/strata";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/strata";
  return "/tmp/strata-cache";
}

//===----------------------------------------------------------------------===//
// The compile cache
//===----------------------------------------------------------------------===//

namespace {

/// A compilation's cache key: its parts and their digest.
struct CacheKey {
  std::string digest;
  /// The input file, absolute (not part of the key: the same bytes
  /// elsewhere hit; kept to find an entry's predecessors).
  std::string modelPath;
  std::string modelHash;
  std::vector<KeyPart> parts;
};

} // namespace

/// "2026-11-29 13:17:05 UTC".
static std::string formatUtc(std::time_t time) {
  char text[32];
  std::tm parts;
  gmtime_r(&time, &parts);
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &parts);
  return text;
}

/// The current time, to the millisecond: "2026-11-29 13:17:05.123 UTC"
/// (explanations prefer the newest of equally close entries).
static std::string nowUtc() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                now.time_since_epoch())
                .count() %
            1000;
  std::string text = formatUtc(std::chrono::system_clock::to_time_t(now));
  std::string fraction = std::to_string(ms);
  fraction.insert(0, 3 - fraction.size(), '0');
  return text.insert(19, "." + fraction);
}

/// An entry's short name in messages: the key's first 12 hex digits.
static std::string shortKey(llvm::StringRef key) {
  return key.take_front(12).str();
}

/// The CPU the code is generated for. For "native", the host's name and a
/// digest of its features: code generation reads both.
static std::string cpuDescription(const std::string &target,
                                  const std::string &cpu) {
  if (cpu != "native")
    return cpu;
  // A GPU target's native is a fixed GPU, not this machine's CPU.
  if (const Target *t = lookupTarget(target); t && t->facts({}).gpu)
    return "native (" + t->name().str() + "'s default GPU)";
  std::vector<std::string> features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.getValue())
      features.push_back(feature.getKey().str());
  std::sort(features.begin(), features.end());
  std::string joined = llvm::join(features, ",");
  return "native (" + llvm::sys::getHostCPUName().str() + ", features " +
         sha256Hex(joined).substr(0, 12) + ")";
}

/// The strata binary itself, by its bytes: a strata built from other code
/// must not reuse the modules the old one compiled, while the same binary
/// rebuilt, copied or reinstalled (a new modification time) keeps hitting.
/// XXH3-128 over the file: 12 MB in a few milliseconds, once per process.
static std::string compilerIdentity() {
  static const std::string identity = [] {
    static int anchor;
    std::string self = llvm::sys::fs::getMainExecutable("strata", &anchor);
    if (self.empty())
      return std::string("unknown");
    auto file = llvm::MemoryBuffer::getFile(self, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!file)
      return std::string("unknown");
    const llvm::MemoryBuffer *bytes = file->get();
    llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(bytes->getBufferStart()),
        bytes->getBufferSize()));
    return std::to_string(bytes->getBufferSize()) + " bytes, xxh3-128 " +
           llvm::utohexstr(hash.high64, /*LowerCase=*/true, 16) +
           llvm::utohexstr(hash.low64, /*LowerCase=*/true, 16);
  }();
  return identity;
}

/// The loaded plugins, by name, with their versions.
static std::vector<std::pair<std::string, std::string>> pluginFields() {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const plugin::LoadedPlugin &loaded : plugin::loadedPlugins())
    fields.push_back({loaded.name, loaded.version});
  // In load order: plugins whose edits share an anchor apply in that
  // order, so the same plugins in another order may compile differently.
  // What they asked for too: a plugin may choose its edits from its own
  // settings (the example plugin's environment variable), which its
  // version does not show.
  const PipelineEdits &edits = getPipelineEdits();
  if (!edits.empty())
    fields.push_back(
        {"pipeline edits",
         "sha256 " + sha256Hex(llvm::join(edits.describe(), "\n"))});
  return fields;
}

/// The name of the key's part that holds the offered input values.
static constexpr llvm::StringLiteral kValuesPart = "input values";

/// Sets the key's digest from its parts.
static void setDigest(CacheKey &key) {
  // Each string is length-prefixed, so no two different lists of parts
  // serialize alike.
  std::string text = "strata compile cache key\n";
  auto append = [&](const std::string &s) {
    text += std::to_string(s.size()) + ":" + s;
  };
  for (const KeyPart &part : key.parts) {
    append(part.name);
    text += std::to_string(part.fields.size()) + "{";
    for (const auto &[field, value] : part.fields) {
      append(field);
      append(value);
    }
    text += "}";
  }
  key.digest = sha256Hex(text);
}

/// The key of a compilation, or nothing when an input of the key (the model,
/// the decisions file) cannot be read: the compiler then reports it.
static std::optional<CacheKey>
computeKey(const std::string &path, const CompileOptions &options, Stage from) {
  auto model = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!model)
    return std::nullopt;
  CacheKey key;
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  key.modelPath = absolute.str().str();
  key.modelHash = sha256Hex((*model)->getBuffer());

  key.parts.push_back({"model", {{"sha256", key.modelHash}}});
  KeyPart shapePart{"input shapes", {}};
  for (const auto &[name, shape] : options.inputShapes)
    shapePart.fields.push_back({name, rt::shapeToString(shape)});
  key.parts.push_back(std::move(shapePart));
  // Only when given, so that every other key stays as it was.
  KeyPart valuePart{kValuesPart.str(), {}};
  for (const auto &[name, values] : options.inputValues) {
    std::string text;
    for (double v : values) {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.17g", v);
      text += (text.empty() ? "" : ", ") + std::string(buffer);
    }
    valuePart.fields.push_back({name, "[" + text + "]"});
  }
  if (!valuePart.fields.empty())
    key.parts.push_back(std::move(valuePart));
  key.parts.push_back({"target", {{"target", options.target}}});
  key.parts.push_back(
      {"cpu", {{"cpu", cpuDescription(options.target, options.cpu)}}});

  std::string decisions = "none";
  if (!options.decisionsFile.empty()) {
    auto file = llvm::MemoryBuffer::getFile(options.decisionsFile,
                                            /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!file)
      return std::nullopt;
    decisions = "sha256 " + sha256Hex((*file)->getBuffer());
  }
  key.parts.push_back(
      {"options",
       {{"libraries", options.useLibraries ? "on" : "off"},
        {"precision",
         options.precision.empty() ? std::string("fp32") : options.precision},
        {"decisions", decisions},
        {"compile-from", stageName(from).str()}}});
  // Only when given, so that every other key stays as it was.
  if (options.allowNewerOpset)
    key.parts.back().fields.push_back({"newer opsets", "allowed"});
  if (options.hostKernels)
    key.parts.back().fields.push_back({"host kernels", "every op"});
  key.parts.push_back(
      {"strata version",
       {{"version", kStrataVersion},
        {"binary", compilerIdentity()},
        {"module format", std::to_string(rt::kFormatMajor) + "." +
                              std::to_string(rt::kFormatMinor)},
        {"llvm", LLVM_VERSION_STRING}}});
  key.parts.push_back(
      {"llvm options", {{"llvm options", options.llvmOptions}}});
  key.parts.push_back({"plugins", pluginFields()});
  setDigest(key);
  return key;
}

/// The key with the offered values of `names` alone (the values part goes
/// when none is left): where a module that requires those values is stored.
static CacheKey keepValues(const CacheKey &key,
                           const std::set<std::string> &names) {
  CacheKey kept = key;
  auto part = llvm::find_if(
      kept.parts, [](const KeyPart &p) { return p.name == kValuesPart; });
  if (part == kept.parts.end())
    return kept;
  llvm::erase_if(part->fields,
                 [&](const auto &field) { return !names.count(field.first); });
  if (part->fields.empty())
    kept.parts.erase(part);
  setDigest(kept);
  return kept;
}

static llvm::json::Value manifestJson(const CacheKey &key,
                                      const std::vector<uint8_t> &module) {
  // Objects print with sorted keys; the key's order lives in computeKey,
  // and reading a manifest needs none.
  llvm::json::Object parts;
  for (const KeyPart &part : key.parts) {
    llvm::json::Object fields;
    for (const auto &[field, value] : part.fields)
      fields[field] = value;
    parts[part.name] = std::move(fields);
  }
  return llvm::json::Object{
      {"format", kManifestFormat},
      {"key", key.digest},
      {"model_path", key.modelPath},
      {"created", nowUtc()},
      {"module",
       llvm::json::Object{{"sha256", sha256Hex(module)},
                          {"bytes", static_cast<int64_t>(module.size())}}},
      {"parts", std::move(parts)}};
}

/// Reads a manifest file; "" on success, else what is wrong with it.
static std::string readManifest(const std::string &file, Manifest &manifest) {
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buffer)
    return "cannot read the manifest " + file + ": " +
           buffer.getError().message();
  return parseManifest((*buffer)->getBuffer(), file, manifest);
}

/// Reads a whole file into `bytes`; false when it cannot be read.
static bool readBytes(const std::string &file, std::vector<uint8_t> &bytes) {
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return false;
  llvm::StringRef data = (*buffer)->getBuffer();
  bytes.assign(data.begin(), data.end());
  return true;
}

/// Writes `data` to `file` through a temporary file in the same directory
/// and a rename, so that readers see the old file or the whole new one.
/// Returns "" or what went wrong ("<file>: <why>"); the temporary file is
/// removed either way.
static std::string writeAtomically(const std::string &dir,
                                   const std::string &file,
                                   llvm::StringRef data) {
  llvm::SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(dir + "/tmp-%%%%%%%%", fd, temp))
    return dir + ": " + ec.message();
  std::error_code ec;
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << data;
    out.close();
    if (out.has_error()) {
      // A full disk (or a file size limit) shows here; the stream must not
      // be destroyed with its error unhandled.
      ec = out.error();
      out.clear_error();
    }
  }
  if (!ec)
    ec = llvm::sys::fs::rename(temp, file);
  if (!ec)
    return "";
  llvm::sys::fs::remove(temp);
  return file + ": " + ec.message();
}

/// "sha256 1a2b3c4d5e6f" for hashes (64 hex digits) in messages, the value
/// itself otherwise.
static std::string displayValue(const std::string &value) {
  llvm::StringRef v(value);
  if (v.consume_front("sha256 ") && v.size() == 64)
    return "sha256 " + v.take_front(12).str();
  if (value.size() == 64 && llvm::all_of(value, llvm::isHexDigit))
    return value.substr(0, 12);
  if (value.empty())
    return "(empty)";
  return value;
}

/// How `now` differs from `then`, field by field ("x: [3, 8] now, [5, 8] in
/// entry ab12cd34ef56"); "" when they are the same. Adds the number of
/// differing fields to `count`.
static std::string describeDifference(const KeyPart *now, const KeyPart *then,
                                      llvm::StringRef entry, unsigned &count) {
  static const std::vector<std::pair<std::string, std::string>> none;
  const auto &nowFields = now ? now->fields : none;
  const auto &thenFields = then ? then->fields : none;
  std::string partName = now ? now->name : then->name;
  auto absentText = [&](const std::string &field) {
    return partName == "plugins" && field != "pipeline edits" ? "not loaded"
                                                              : "none";
  };
  auto lookup = [](const std::vector<std::pair<std::string, std::string>> &f,
                   const std::string &name) -> const std::string * {
    for (const auto &[field, value] : f)
      if (field == name)
        return &value;
    return nullptr;
  };
  std::vector<std::string> names;
  for (const auto &[field, value] : nowFields)
    names.push_back(field);
  for (const auto &[field, value] : thenFields)
    if (!lookup(nowFields, field))
      names.push_back(field);
  std::vector<std::string> differences;
  for (const std::string &name : names) {
    const std::string *a = lookup(nowFields, name);
    const std::string *b = lookup(thenFields, name);
    if (a && b && *a == *b)
      continue;
    std::string text = name == partName ? "" : name + ": ";
    text += (a ? displayValue(*a) : absentText(name)) + std::string(" now, ") +
            (b ? displayValue(*b) : absentText(name)) + " in entry " +
            entry.str();
    differences.push_back(std::move(text));
  }
  count += differences.size();
  return llvm::join(differences, "; ");
}

/// "input shapes differ (...); model, cpu, ... are the same" for a key and
/// an entry's manifest; `differing` counts the parts that differ and
/// `fields` the fields.
static std::string explainDifference(const CacheKey &key,
                                     const Manifest &manifest,
                                     unsigned &differing, unsigned &fields) {
  std::string entry = shortKey(manifest.key);
  std::vector<std::string> differ, same;
  fields = 0;
  auto verb = [](const std::string &name) {
    return llvm::StringRef(name).ends_with("s") ? " differ (" : " differs (";
  };
  for (const KeyPart &part : key.parts) {
    unsigned count = 0;
    std::string difference =
        describeDifference(&part, manifest.part(part.name), entry, count);
    fields += count;
    if (difference.empty())
      same.push_back(part.name);
    else
      differ.push_back(part.name + verb(part.name) + difference + ")");
  }
  // Parts a newer or older strata recorded that this one does not have.
  for (const KeyPart &part : manifest.parts)
    if (llvm::none_of(key.parts,
                      [&](const KeyPart &p) { return p.name == part.name; }))
      differ.push_back(part.name + verb(part.name) +
                       describeDifference(nullptr, &part, entry, fields) + ")");
  differing = differ.size();
  std::string text = llvm::join(differ, "; ");
  if (differ.empty())
    text = "every part of the key is the same as in entry " + entry +
           ", yet the digests differ";
  else if (!same.empty())
    text += "; " + llvm::join(same, ", ") +
            (same.size() == 1 ? " is the same" : " are the same");
  return text;
}

/// Why a lookup of `key` missed, from the entries for the same model (same
/// path or same bytes) in `dir`.
static void explainMiss(const CacheKey &key, const std::string &dir) {
  std::vector<Manifest> candidates;
  unsigned unreadable = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef file = it->path();
    if (!file.ends_with(".json") ||
        llvm::sys::path::filename(file).starts_with("tmp-"))
      continue;
    Manifest manifest;
    if (!readManifest(file.str(), manifest).empty()) {
      ++unreadable;
      continue;
    }
    if (manifest.modelPath == key.modelPath ||
        manifest.modelHash() == key.modelHash)
      candidates.push_back(std::move(manifest));
  }
  std::string note = unreadable ? " (" + std::to_string(unreadable) +
                                      " unreadable manifest" +
                                      (unreadable > 1 ? "s" : "") + " skipped)"
                                : "";
  if (candidates.empty()) {
    llvm::errs() << "strata: cache miss: no entry for this model (same path "
                    "or same bytes) in "
                 << dir << note << "\n";
    return;
  }
  // The closest entry says the most: fewest differing parts, then fewest
  // differing fields, then newest.
  std::string best, bestCreated;
  unsigned bestParts = 0, bestFields = 0;
  for (const Manifest &manifest : candidates) {
    unsigned parts = 0, fields = 0;
    std::string text = explainDifference(key, manifest, parts, fields);
    // The creation times are swapped: on a tie, the newer entry wins.
    if (best.empty() ||
        std::make_tuple(parts, fields, bestCreated) <
            std::make_tuple(bestParts, bestFields, manifest.created)) {
      best = text;
      bestParts = parts;
      bestFields = fields;
      bestCreated = manifest.created;
    }
  }
  llvm::errs() << "strata: cache miss: " << best;
  if (candidates.size() > 1)
    llvm::errs() << " (the closest of " << candidates.size()
                 << " entries for this model)";
  llvm::errs() << note << "\n";
}

namespace {
/// One compilation's place in the cache.
class CacheEntry {
public:
  CacheEntry(const std::string &path, const CompileFlags &flags,
             const std::map<std::string, std::vector<int64_t>> &shapes)
      : flags(flags) {
    if (!flags.useCache) {
      if (flags.explainCache)
        llvm::errs() << "strata: cache not used: --no-cache\n";
      return;
    }
    const char *dumpEnv = std::getenv("STRATA_DUMP_DIR");
    if (!flags.options.dumpDir.empty() || (dumpEnv && *dumpEnv)) {
      // A cached module would leave the dump directory empty.
      if (flags.explainCache)
        llvm::errs() << "strata: cache not used: "
                     << (flags.options.dumpDir.empty() ? "STRATA_DUMP_DIR"
                                                       : "--dump-ir")
                     << " compiles to write every stage's IR\n";
      return;
    }
    key = computeKey(path, toCompileOptions(flags, shapes), flags.from);
    if (!key)
      return;
    // Values offered for small inputs (strata run reads them from the
    // input files) are in the key, but a module is the same for every
    // value of an input it does not require: it is stored under the key
    // with the values it requires alone (none: the key without values,
    // valueFreeKey). Lookups try that key first, then the sets of
    // required inputs that the value-free key's index lists.
    if (!flags.options.inputValues.empty())
      valueFreeKey = keepValues(*key, {});
    dir = cacheDirectory();
    usePaths(*key);
  }

  bool enabled() const { return key.has_value(); }
  const std::string &moduleFile() const { return modulePath; }

  /// The cached module's bytes, checked against the manifest; false on a
  /// miss or a bad entry (reported).
  bool lookup(std::vector<uint8_t> &bytes) {
    if (!enabled())
      return false;
    if (valueFreeKey) {
      // A module compiled without values requires none (what is required
      // is among what was offered), so entries under these keys need no
      // further check.
      if (tryEntry(*valueFreeKey, bytes,
                   "; the module requires none of the input values"))
        return true;
      for (const std::set<std::string> &names : readIndex()) {
        if (!llvm::all_of(names, [&](const std::string &name) {
              return flags.options.inputValues.count(name) != 0;
            }))
          continue;
        CacheKey kept = keepValues(*key, names);
        if (kept.digest != key->digest &&
            tryEntry(kept, bytes,
                     "; the module requires the values of " +
                         quotedList(names) + " alone")) {
          touchCacheEntry(indexPath());
          return true;
        }
      }
      usePaths(*key);
    }
    bool hasModule = llvm::sys::fs::exists(modulePath);
    bool hasManifest = llvm::sys::fs::exists(manifestPath);
    if (!hasModule && !hasManifest) {
      if (flags.explainCache)
        explainMiss(*key, dir);
      return false;
    }
    Manifest manifest;
    std::string problem = check(*key, manifest, bytes, hasModule, hasManifest);
    if (!problem.empty()) {
      reject(problem);
      return false;
    }
    reportHit(*key, manifest, "");
    return true;
  }

  /// Reports a bad entry (it is rebuilt by the next store).
  void reject(const std::string &problem) {
    llvm::errs() << "strata: warning: ignoring a bad compile cache entry ("
                 << problem << "); recompiling\n";
    if (flags.explainCache)
      llvm::errs() << "strata: cache miss: entry " << shortKey(key->digest)
                   << " is bad; rebuilding it\n";
    // Removed now, so that a failing compilation does not leave it behind
    // to be reported again.
    llvm::sys::fs::remove(manifestPath);
    llvm::sys::fs::remove(modulePath);
  }

  /// Best effort: a cache that cannot be written costs a recompilation next
  /// time, nothing else. The module goes first: a manifest is only ever
  /// next to the module it describes (a reader between the two renames sees
  /// a module without a manifest, a bad entry it rebuilds).
  void store(const std::vector<uint8_t> &bytes) {
    if (!enabled())
      return;
    std::optional<std::set<std::string>> required;
    if (valueFreeKey)
      required = requiredValues(bytes);
    const CacheKey storeKey = required ? keepValues(*key, *required) : *key;
    usePaths(storeKey);
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      llvm::errs() << "strata: warning: cannot create the compile cache "
                   << "directory " << dir << " (" << ec.message()
                   << "); the module is not cached (set STRATA_CACHE_DIR, or "
                   << "--no-cache)\n";
      return;
    }
    llvm::StringRef data(reinterpret_cast<const char *>(bytes.data()),
                         bytes.size());
    std::string manifest;
    llvm::raw_string_ostream os(manifest);
    os << llvm::formatv("{0:2}", manifestJson(storeKey, bytes)) << "\n";
    std::string problem = writeAtomically(dir, modulePath, data);
    if (problem.empty())
      problem = writeAtomically(dir, manifestPath, manifest);
    if (!problem.empty()) {
      // Neither half of the entry stays: a module without its manifest
      // would be reported as a bad entry by the next lookup.
      llvm::sys::fs::remove(manifestPath);
      llvm::sys::fs::remove(modulePath);
      llvm::errs() << "strata: warning: cannot write into the compile cache "
                   << "directory " << dir << " (" << problem
                   << "); the module is not cached\n";
      return;
    }
    if (required && !required->empty())
      addToIndex(*required);
    enforceCacheLimit(dir, storeKey.digest, flags.options.verbose);
  }

private:
  /// Marks the entry at the current paths used and says so when asked.
  void reportHit(const CacheKey &k, const Manifest &manifest,
                 llvm::StringRef why) {
    touchCacheEntry(manifestPath);
    if (flags.explainCache)
      llvm::errs() << "strata: cache hit: entry " << shortKey(k.digest) << " ("
                   << modulePath << ", written " << manifest.created << why
                   << ")\n";
    else if (flags.options.verbose)
      llvm::errs() << "strata: using the cached " << modulePath << "\n";
  }

  void usePaths(const CacheKey &k) {
    modulePath = dir + "/" + k.digest + ".strata";
    manifestPath = dir + "/" + k.digest + ".json";
  }

  /// Looks up the entry of `k` (left at the current paths); a bad or
  /// missing one is a miss here, rebuilt by the store if it is the key the
  /// module belongs under.
  bool tryEntry(const CacheKey &k, std::vector<uint8_t> &bytes,
                llvm::StringRef why) {
    usePaths(k);
    Manifest manifest;
    if (llvm::sys::fs::exists(modulePath) &&
        llvm::sys::fs::exists(manifestPath) &&
        check(k, manifest, bytes, true, true).empty()) {
      reportHit(k, manifest, why);
      return true;
    }
    bytes.clear();
    return false;
  }

  /// The inputs whose values a module requires (Module.cpp reads them with
  /// the signature); nothing when it does not load, so that it is stored
  /// under the key of every offered value.
  static std::optional<std::set<std::string>>
  requiredValues(const std::vector<uint8_t> &bytes) {
    try {
      std::shared_ptr<const rt::Module> module =
          rt::Module::loadFromMemory(bytes, "cache entry");
      std::set<std::string> names;
      for (const rt::TensorSignature &input : module->inputs())
        if (!input.requiredValue.empty())
          names.insert(input.name);
      return names;
    } catch (const rt::Error &) {
      return std::nullopt;
    }
  }

  static std::string quotedList(const std::set<std::string> &names) {
    std::string text;
    for (const std::string &name : names)
      text += (text.empty() ? "'" : ", '") + name + "'";
    return text;
  }

  /// The value-free key's index: the sets of inputs whose values the
  /// modules compiled for this model, shapes and options required. It
  /// belongs to the value-free key's entry (CacheStore.cpp counts, evicts
  /// and clears it with it).
  std::string indexPath() const {
    return dir + "/" + valueFreeKey->digest + ".values";
  }

  /// The index's sets; none when it is missing or unreadable (a store
  /// rewrites it).
  std::vector<std::set<std::string>> readIndex() const {
    std::vector<std::set<std::string>> sets;
    auto buffer = llvm::MemoryBuffer::getFile(indexPath(), /*IsText=*/true);
    if (!buffer)
      return sets;
    llvm::Expected<llvm::json::Value> json =
        llvm::json::parse((*buffer)->getBuffer());
    if (!json) {
      llvm::consumeError(json.takeError());
      return sets;
    }
    const llvm::json::Object *object = json->getAsObject();
    const llvm::json::Array *required =
        object ? object->getArray("required") : nullptr;
    if (!required)
      return sets;
    for (const llvm::json::Value &entry : *required) {
      const llvm::json::Array *names = entry.getAsArray();
      if (!names)
        continue;
      std::set<std::string> set;
      for (const llvm::json::Value &name : *names)
        if (std::optional<llvm::StringRef> text = name.getAsString())
          set.insert(text->str());
      if (!set.empty())
        sets.push_back(std::move(set));
    }
    return sets;
  }

  /// Adds a set to the index (best effort: two writers at once may lose
  /// one set, which costs a recompilation, nothing else).
  void addToIndex(const std::set<std::string> &names) {
    std::vector<std::set<std::string>> sets = readIndex();
    if (llvm::is_contained(sets, names))
      return;
    sets.push_back(names);
    llvm::json::Array required;
    for (const std::set<std::string> &set : sets)
      required.push_back(llvm::json::Array(
          std::vector<llvm::json::Value>(set.begin(), set.end())));
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"format", kManifestFormat},
                                     {"required", std::move(required)}}))
       << "\n";
    if (std::string problem = writeAtomically(dir, indexPath(), text);
        !problem.empty())
      llvm::errs() << "strata: warning: cannot write the compile cache's "
                   << "value index (" << problem << ")\n";
  }

  std::string check(const CacheKey &k, Manifest &manifest,
                    std::vector<uint8_t> &bytes, bool hasModule,
                    bool hasManifest) {
    if (!hasManifest)
      return modulePath + " has no manifest";
    if (std::string problem = readManifest(manifestPath, manifest);
        !problem.empty())
      return problem;
    if (manifest.key != k.digest)
      return "the manifest " + manifestPath + " is for another key";
    if (!hasModule || !readBytes(modulePath, bytes))
      return "the module " + modulePath + " is missing";
    return checkModuleBytes(manifest, bytes, modulePath);
  }

  const CompileFlags &flags;
  std::optional<CacheKey> key;
  /// The key without the offered input values, when values were offered;
  /// its entry holds the modules that require none, its index the sets
  /// that others require.
  std::optional<CacheKey> valueFreeKey;
  std::string dir, modulePath, manifestPath;
};
} // namespace

bool compileOnnxBytes(const std::string &path, const CompileFlags &flags,
                      const std::map<std::string, std::vector<int64_t>> &shapes,
                      std::vector<uint8_t> &bytes) {
  CacheEntry entry(path, flags, shapes);
  if (entry.lookup(bytes))
    return true;
  bytes.clear();
  if (!compileUncached(path, flags, shapes, bytes))
    return false;
  entry.store(bytes);
  return true;
}

static std::shared_ptr<const rt::Module>
loadCompiled(std::vector<uint8_t> bytes, const std::string &path) {
  try {
    return rt::Module::loadFromMemory(std::move(bytes), path);
  } catch (const rt::Error &e) {
    llvm::errs() << path << ": error: " << e.what() << "\n";
    return nullptr;
  }
}

std::shared_ptr<const rt::Module>
compileOnnx(const std::string &path, const CompileFlags &flags,
            const std::map<std::string, std::vector<int64_t>> &shapes) {
  CacheEntry entry(path, flags, shapes);
  std::vector<uint8_t> bytes;
  if (entry.lookup(bytes)) {
    // The bytes are the ones stored, but the runtime also checks what the
    // manifest cannot (e.g. a module of a format this runtime rejects).
    try {
      return rt::Module::loadFromMemory(std::move(bytes), entry.moduleFile());
    } catch (const rt::Error &e) {
      entry.reject(e.what());
    }
  }
  bytes.clear();
  if (!compileUncached(path, flags, shapes, bytes))
    return nullptr;
  entry.store(bytes);
  return loadCompiled(std::move(bytes), path);
}

} // namespace strata::driver
