//===- CodeLoader.h - Loading a module's generated code ---------*- C++ -*-===//
//
// LoadedCode maps Module::code(), an ELF shared object, into the process with
// the dynamic loader and finds the generated kernels in it. Private to the
// runtime library: sessions reach it through Module::loadCode().
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_CODELOADER_H
#define STRATA_RUNTIME_LIB_CODELOADER_H

#include "strata/Runtime/Runtime.h"

namespace strata::rt::detail {

/// A shared object loaded from memory; dlclose'd by the destructor.
class LoadedCode {
public:
  /// Checks that the bytes are an ELF shared object for this machine and
  /// loads them (RTLD_NOW | RTLD_LOCAL). Throws Error naming `moduleName`,
  /// with dlerror()'s text when the dynamic loader refuses the object.
  LoadedCode(const uint8_t *code, size_t size, const std::string &moduleName);
  ~LoadedCode();
  LoadedCode(const LoadedCode &) = delete;
  LoadedCode &operator=(const LoadedCode &) = delete;

  /// The function the object itself exports as `symbol`; nullptr with the
  /// reason in `why` when there is none (a symbol of one of the object's
  /// dependencies, such as libc's memcpy, does not count).
  void *function(const std::string &symbol, std::string &why) const;

private:
  void *handle_ = nullptr;
  /// The memory file the object was opened from (-1 for a temporary file):
  /// open while the object is loaded, so that its name stays unique.
  int fd_ = -1;
};

} // namespace strata::rt::detail

#endif // STRATA_RUNTIME_LIB_CODELOADER_H
