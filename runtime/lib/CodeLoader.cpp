//===- CodeLoader.cpp - Loading a module's generated code -------*- C++ -*-===//
//
// The generated kernels arrive as the bytes of an ELF shared object inside
// the module. The dynamic loader only opens files, so the bytes go into an
// anonymous memory file (memfd_create) that is opened through
// /proc/self/fd/N: nothing touches the disk and nothing is left behind if the
// process dies. Where memfd or /proc is unavailable, a private temporary file
// (mkstemp in $TMPDIR, $TMP or /tmp) is used and unlinked right after dlopen.
//
// The header is checked before dlopen so that the common mistakes (not ELF,
// another machine, an executable or a relocatable object) get a clear
// message; anything else the loader refuses is reported with dlerror()'s
// text. Loading runs the object's constructors: a module is code, and only
// trusted modules should be loaded.
//
//===----------------------------------------------------------------------===//

#include "CodeLoader.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

namespace strata::rt {

namespace detail {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char *kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char *kHostMachineName = "AArch64";
#else
#error "strata's runtime loads generated code on x86-64 and AArch64 only"
#endif

/// Why the bytes cannot be this machine's shared object, or "".
std::string checkElfHeader(const uint8_t *code, size_t size) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(code, ELFMAG, SELFMAG) != 0)
    return "is not an ELF file (" + std::to_string(size) + " bytes)";
  Elf64_Ehdr header;
  std::memcpy(&header, code, sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64)
    return "is not a 64-bit ELF file";
  if (header.e_ident[EI_DATA] != ELFDATA2LSB)
    return "is not a little-endian ELF file";
  if (header.e_machine != kHostMachine)
    return "is ELF code for machine " + std::to_string(header.e_machine) +
           ", not " + kHostMachineName;
  if (header.e_type != ET_DYN)
    return "is an ELF file of type " + std::to_string(header.e_type) +
           ", not a shared object (ET_DYN)";
  return "";
}

bool writeAll(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string dlerrorText() {
  const char *text = dlerror();
  return text ? text : "unknown dynamic loader error";
}

/// dlopen through an anonymous memory file. Returns false (and leaves
/// `handle` null) when memfd or /proc is unavailable, so that the caller
/// falls back to a temporary file; a loader error is reported in `error`.
///
/// The dynamic loader matches objects already loaded by the name they were
/// opened under, before it looks at the file: a second object opened as
/// the same /proc/self/fd/N is handed the first one's handle. So the memory
/// file stays open (`fd`) for as long as the object is loaded, which keeps
/// N from being reused, and a name that is somehow taken already (an object
/// dlclose could not unload) is refused before anything is opened under it.
bool openFromMemfd(const uint8_t *code, size_t size, void *&handle, int &fd,
                   std::string &error) {
  fd = memfd_create("strata-code", MFD_CLOEXEC);
  if (fd < 0)
    return false;
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto giveUp = [&] {
    ::close(fd);
    fd = -1;
    return false;
  };
  if (!writeAll(fd, code, size) || ::access(path.c_str(), R_OK) != 0)
    return giveUp();
  if (void *taken = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(taken);
    return giveUp();
  }
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = dlerrorText();
    ::close(fd);
    fd = -1;
  }
  return true;
}

void *openFromTempFile(const uint8_t *code, size_t size,
                       const std::string &moduleName, std::string &error) {
  const char *dir = std::getenv("TMPDIR");
  if (!dir || !*dir)
    dir = std::getenv("TMP");
  if (!dir || !*dir)
    dir = "/tmp";
  std::string path = std::string(dir) + "/strata-code-XXXXXX";
  int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0)
    throw Error("strata module '" + moduleName +
                "': cannot create a temporary file in '" + dir +
                "' for its code: " + std::strerror(errno));
  bool written = writeAll(fd, code, size);
  int writeErrno = errno;
  ::close(fd);
  void *handle = nullptr;
  if (written) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      error = dlerrorText();
  }
  ::unlink(path.c_str());
  if (!written)
    throw Error("strata module '" + moduleName +
                "': cannot write its code to '" + path +
                "': " + std::strerror(writeErrno));
  return handle;
}

} // namespace

LoadedCode::LoadedCode(const uint8_t *code, size_t size,
                       const std::string &moduleName) {
  std::string who = "strata module '" + moduleName + "': ";
  if (!code || size == 0)
    throw Error(who + "has generated-kernel steps but no code");
  std::string bad = checkElfHeader(code, size);
  if (!bad.empty())
    throw Error(who + "its code " + bad + "; expected a " + kHostMachineName +
                " ELF shared object");
  std::string error;
  if (!openFromMemfd(code, size, handle_, fd_, error))
    handle_ = openFromTempFile(code, size, moduleName, error);
  if (!handle_)
    throw Error(who + "cannot load its code as a shared object: " + error);
}

LoadedCode::~LoadedCode() {
  if (handle_)
    dlclose(handle_);
  // Only now may the memory file's descriptor (its name) be reused.
  if (fd_ >= 0)
    ::close(fd_);
}

void *LoadedCode::function(const std::string &symbol, std::string &why) const {
  dlerror();
  void *address = dlsym(handle_, symbol.c_str());
  if (!address) {
    why = "the code exports no symbol '" + symbol + "'";
    return nullptr;
  }
  // dlsym searches the object's dependencies too; a kernel named like a libc
  // function must not silently become that function.
  link_map *own = nullptr;
  link_map *found = nullptr;
  void *entry = nullptr; // an ElfW(Sym) *
  Dl_info info;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &own) != 0 ||
      !dladdr1(address, &info, reinterpret_cast<void **>(&found),
               RTLD_DL_LINKMAP) ||
      found != own) {
    why = "the code exports no symbol '" + symbol +
          "' (only a library it depends on does)";
    return nullptr;
  }
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) && entry) {
    unsigned type = ELF64_ST_TYPE(static_cast<ElfW(Sym) *>(entry)->st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) {
      why = "the code's symbol '" + symbol + "' is not a function";
      return nullptr;
    }
  }
  return address;
}

} // namespace detail

std::shared_ptr<detail::LoadedCode> Module::loadCode() const {
  std::lock_guard<std::mutex> lock(codeMutex_);
  if (std::shared_ptr<detail::LoadedCode> code = loadedCode_.lock())
    return code;
  auto code = std::make_shared<detail::LoadedCode>(code_, codeSize_, name_);
  loadedCode_ = code;
  return code;
}

} // namespace strata::rt
