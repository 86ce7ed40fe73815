//===- module.cpp - fuzz target: module bytes, loaded and run ---*- C++ -*-===//
//
// Module::loadFromMemory on arbitrary bytes, then, for modules the loader
// accepts whose steps are all the runtime's own kernels, a session on the
// CPU and one run on inputs of zeros. Anything but strata::rt::Error is a
// finding. Mutated bytes rarely keep the checksum the compiler sealed, so
// the target reseals them (detail::sealModule): the loader's structural
// checks then see them rather than stopping at the checksum. Generated
// machine code is trusted by design (a module is code), so modules that
// carry some are loaded but not run.
//
//===----------------------------------------------------------------------===//

#include "strata/Runtime/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace strata::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  detail::sealModule(bytes);
  std::shared_ptr<const Module> module;
  try {
    module = Module::loadFromMemory(std::move(bytes), "fuzz.strata");
  } catch (const Error &) {
    return 0;
  }
  if (module->codeSize() != 0 || module->target() != "cpu" ||
      module->arenaSize() > (64u << 20))
    return 0;
  // Host buffers of static shape are allocated when the session is created,
  // as large as the module declares: a module asking for gigabytes gets
  // them, or OutOfMemory, which is not a finding but exceeds libFuzzer's
  // malloc limit. Keep them within the arena's bound.
  uint64_t hostBytes = 0;
  for (const BufferInfo &b : module->buffers()) {
    if (b.kind != BufferKind::Host)
      continue;
    uint64_t bytes =
        b.dtype == DType::String ? sizeof(std::string) : dtypeSize(b.dtype);
    for (int64_t d : b.shape)
      if (d > 0 && __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
        return 0;
    if (__builtin_add_overflow(hostBytes, bytes, &hostBytes) ||
        hostBytes > (64u << 20))
      return 0;
  }
  try {
    SessionOptions options;
    options.threads = 1;
    Session session(module, options);
    for (size_t i = 0; i < module->inputs().size(); ++i) {
      std::vector<int64_t> shape;
      int64_t elements = 1;
      for (int64_t d : module->inputs()[i].shape) {
        shape.push_back(d < 0 ? 1 : d);
        elements *= shape.back();
        if (elements > (1 << 20))
          return 0;
      }
      session.setInput(i, Tensor::zeros(module->inputs()[i].dtype, shape));
    }
    session.run();
  } catch (const Error &) {
  }
  return 0;
}
