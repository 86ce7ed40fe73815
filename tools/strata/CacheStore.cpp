//===- CacheStore.cpp - the compile cache's size limit and command -------===//
//
// The cache directory as a whole: its entries (KEY.strata + KEY.json, and
// KEY.values, the index of a key without input values), their
// last use (the manifest's modification time, which a hit refreshes), the
// size limit with least-recently-used eviction after every store, and the
// `strata cache stats|clear` command (docs/cli.md, "Managing it").
//
// Eviction runs in the process that has just written an entry, while other
// processes may be reading: an entry's manifest is removed before its
// module, so that a reader sees a whole entry, nothing, or a module without a
// manifest (which it treats as a bad entry and rebuilds), never a manifest
// without its module.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <tuple>

namespace cl = llvm::cl;

namespace strata::driver {

namespace {

/// One entry of the directory, as found there.
struct StoredEntry {
  std::string key;
  uint64_t bytes = 0;
  bool hasModule = false, hasManifest = false;
  /// Last use: the manifest's modification time (the module's without one),
  /// or the index's when later (a hit through the index refreshes it).
  llvm::sys::TimePoint<> lastUse, indexUse;

  /// A value index without a module of its own is whole as it is.
  bool incomplete() const { return hasModule != hasManifest; }
};

bool isKey(llvm::StringRef stem) {
  return stem.size() == 64 && llvm::all_of(stem, [](char c) {
           return llvm::isDigit(c) || (c >= 'a' && c <= 'f');
         });
}

std::string localTime(std::time_t time) {
  char text[32];
  std::tm parts;
  localtime_r(&time, &parts);
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &parts);
  return text;
}

} // namespace

/// "1.5 GiB", "312 KiB", "17 bytes".
std::string humanBytes(uint64_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:f1} {1}", value, units[unit]).str();
}

/// The entries of `dir` (none when it does not exist), and in `temporary`
/// the half-written files of writers (tmp-*) with their ages in seconds.
static std::vector<StoredEntry>
listEntries(const std::string &dir,
            std::vector<std::pair<std::string, double>> *temporary = nullptr) {
  std::map<std::string, StoredEntry> byKey;
  std::error_code ec;
  auto now = std::chrono::system_clock::now();
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    llvm::sys::fs::file_status status;
    if (llvm::sys::fs::status(it->path(), status) ||
        status.type() != llvm::sys::fs::file_type::regular_file)
      continue;
    if (name.starts_with("tmp-")) {
      if (temporary)
        temporary->push_back(
            {it->path(), std::chrono::duration<double>(
                             now - status.getLastModificationTime())
                             .count()});
      continue;
    }
    llvm::StringRef stem = llvm::sys::path::stem(name);
    llvm::StringRef ext = llvm::sys::path::extension(name);
    if (!isKey(stem) ||
        (ext != ".strata" && ext != ".json" && ext != ".values"))
      continue;
    StoredEntry &entry = byKey[stem.str()];
    entry.key = stem.str();
    entry.bytes += status.getSize();
    llvm::sys::TimePoint<> modified = status.getLastModificationTime();
    if (ext == ".values") {
      entry.indexUse = modified;
    } else if (ext == ".json") {
      entry.hasManifest = true;
      entry.lastUse = modified;
    } else {
      entry.hasModule = true;
      if (!entry.hasManifest)
        entry.lastUse = std::max(entry.lastUse, modified);
    }
  }
  std::vector<StoredEntry> entries;
  for (auto &[key, entry] : byKey) {
    entry.lastUse = std::max(entry.lastUse, entry.indexUse);
    entries.push_back(std::move(entry));
  }
  return entries;
}

static void removeEntry(const std::string &dir, const std::string &key) {
  llvm::sys::fs::remove(dir + "/" + key + ".json");
  llvm::sys::fs::remove(dir + "/" + key + ".strata");
  llvm::sys::fs::remove(dir + "/" + key + ".values");
}

uint64_t cacheSizeLimit(std::string *problem) {
  const uint64_t fallback = uint64_t(5) << 30;
  const char *text = std::getenv("STRATA_CACHE_MAX_SIZE");
  if (!text || !*text)
    return fallback;
  llvm::StringRef value = llvm::StringRef(text).trim();
  uint64_t scale = 1;
  char unit = value.empty() ? 0 : llvm::toUpper(value.back());
  if (unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T') {
    scale = uint64_t(1) << (unit == 'K'   ? 10
                            : unit == 'M' ? 20
                            : unit == 'G' ? 30
                                          : 40);
    value = value.drop_back();
  }
  uint64_t number = 0;
  if (value.getAsInteger(10, number) ||
      (number && scale > UINT64_MAX / number)) {
    if (problem)
      *problem = std::string("STRATA_CACHE_MAX_SIZE='") + text +
                 "' is not a size (bytes, or a number with K, M, G or T); "
                 "using 5G";
    return fallback;
  }
  return number * scale; // 0: no limit
}

void touchCacheEntry(const std::string &manifestPath) {
  // The manifest's modification time is the entry's last use; a hit sets it
  // (best effort: a read-only cache simply keeps its order).
  ::utimensat(AT_FDCWD, manifestPath.c_str(), nullptr, 0);
}

void enforceCacheLimit(const std::string &dir, const std::string &keepKey,
                       bool verbose) {
  std::string problem;
  uint64_t limit = cacheSizeLimit(&problem);
  if (!problem.empty())
    llvm::errs() << "strata: warning: " << problem << "\n";
  std::vector<std::pair<std::string, double>> temporary;
  std::vector<StoredEntry> entries = listEntries(dir, &temporary);
  // Writers that died left these behind; a live writer renames its file
  // within seconds.
  for (const auto &[path, age] : temporary)
    if (age > 3600)
      llvm::sys::fs::remove(path);
  if (limit == 0)
    return;
  uint64_t total = 0;
  for (const StoredEntry &e : entries)
    total += e.bytes;
  if (total <= limit)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const StoredEntry &a, const StoredEntry &b) {
              return std::tie(a.lastUse, a.key) < std::tie(b.lastUse, b.key);
            });
  size_t evicted = 0;
  uint64_t freed = 0;
  for (const StoredEntry &e : entries) {
    if (total <= limit)
      break;
    if (e.key == keepKey)
      continue;
    removeEntry(dir, e.key);
    total -= e.bytes;
    freed += e.bytes;
    ++evicted;
  }
  if (verbose && evicted)
    llvm::errs() << "strata: evicted " << evicted
                 << " least recently used cache entr"
                 << (evicted == 1 ? "y" : "ies") << " (" << humanBytes(freed)
                 << ") to stay under " << humanBytes(limit) << "\n";
}

//===----------------------------------------------------------------------===//
// strata cache stats|clear
//===----------------------------------------------------------------------===//

cl::SubCommand &cacheCommand() {
  static cl::SubCommand command(
      "cache", "Show (stats) or empty (clear) the compile cache");
  return command;
}

static cl::opt<std::string> cacheAction(cl::Positional, cl::Required,
                                        cl::desc("<stats|clear>"),
                                        cl::sub(cacheCommand()));
static cl::opt<bool> cacheJson("json",
                               cl::desc("stats: print JSON instead of text"),
                               cl::sub(cacheCommand()));

int runCacheCommand() {
  std::string dir = cacheDirectory();
  std::vector<std::pair<std::string, double>> temporary;
  std::vector<StoredEntry> entries = listEntries(dir, &temporary);
  if (cacheAction == "clear") {
    uint64_t freed = 0;
    for (const StoredEntry &e : entries) {
      removeEntry(dir, e.key);
      freed += e.bytes;
    }
    for (const auto &[path, age] : temporary) {
      uint64_t size = 0;
      if (!llvm::sys::fs::file_size(path, size))
        freed += size;
      llvm::sys::fs::remove(path);
    }
    // Anything else (the directory itself, files that are not entries) is
    // left alone: the directory may be shared with other data.
    llvm::outs() << "strata: removed " << entries.size() << " entr"
                 << (entries.size() == 1 ? "y" : "ies") << " ("
                 << humanBytes(freed) << ") from " << dir << "\n";
    return 0;
  }
  if (cacheAction != "stats") {
    llvm::errs() << "strata: error: unknown cache action '" << cacheAction
                 << "' (expected stats or clear)\n";
    return 2;
  }
  std::string problem;
  uint64_t limit = cacheSizeLimit(&problem);
  if (!problem.empty())
    llvm::errs() << "strata: warning: " << problem << "\n";
  uint64_t total = 0;
  size_t incomplete = 0;
  std::time_t oldest = 0, newest = 0;
  for (const StoredEntry &e : entries) {
    total += e.bytes;
    if (e.incomplete())
      ++incomplete;
    std::time_t used = llvm::sys::toTimeT(e.lastUse);
    oldest = oldest ? std::min(oldest, used) : used;
    newest = std::max(newest, used);
  }
  if (cacheJson) {
    llvm::json::Object out{
        {"directory", dir},
        {"entries", static_cast<int64_t>(entries.size())},
        {"bytes", static_cast<int64_t>(total)},
        {"limit_bytes", static_cast<int64_t>(limit)},
        {"incomplete_entries", static_cast<int64_t>(incomplete)},
        {"temporary_files", static_cast<int64_t>(temporary.size())}};
    if (!entries.empty()) {
      out["least_recent_use"] = static_cast<int64_t>(oldest);
      out["most_recent_use"] = static_cast<int64_t>(newest);
    }
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out)))
                 << "\n";
    return 0;
  }
  llvm::outs() << "directory  " << dir
               << (llvm::sys::fs::exists(dir) ? "" : " (does not exist yet)")
               << "\n";
  llvm::outs() << "entries    " << entries.size();
  if (incomplete)
    llvm::outs() << " (" << incomplete
                 << " without a module or a manifest, rebuilt when used)";
  llvm::outs() << "\n";
  llvm::outs() << "size       " << humanBytes(total) << ", limit "
               << (limit ? humanBytes(limit) : std::string("none"))
               << " (STRATA_CACHE_MAX_SIZE; least recently used entries are "
                  "evicted past it)\n";
  if (!entries.empty())
    llvm::outs() << "last used  " << localTime(oldest) << " (least recent) to "
                 << localTime(newest) << " (most recent)\n";
  if (!temporary.empty())
    llvm::outs() << "temporary  " << temporary.size()
                 << " file(s) being written or left by a writer that died\n";
  return 0;
}

} // namespace strata::driver
