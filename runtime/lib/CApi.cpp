//===- CApi.cpp - The runtime's C API (strata/runtime_c.h) ------*- C++ -*-===//
//
// A thin layer over the C++ API: each function catches every exception at
// the boundary and turns it into a status plus the thread's last-error
// message. Which status a strata::rt::Error becomes depends on the call it
// came from (loading a module: INVALID_MODULE; binding an input:
// INVALID_ARGUMENT; running: RUNTIME), since the message already says what
// went wrong.
//
//===----------------------------------------------------------------------===//

#include "strata/runtime_c.h"

#include "strata/Runtime/Cuda.h"
#include "strata/Runtime/Runtime.h"

#include <algorithm>
#include <cstring>
#include <new>

#ifndef STRATA_RUNTIME_VERSION
#error "the build defines STRATA_RUNTIME_VERSION (include/strata/Version.h)"
#endif

using namespace strata::rt;

struct strata_module {
  std::shared_ptr<const Module> module;
};

struct strata_session {
  std::unique_ptr<Session> session;
  /// strata_session_cuda_library_choices's text.
  std::string libraryChoices;
};

struct strata_session_options {
  SessionOptions options;
};

namespace {

thread_local std::string lastError;

strata_status fail(strata_status status, const std::string &message) {
  lastError = message;
  return status;
}

/// Runs `body`; an exception becomes `onError` (strata::rt::Error) or the
/// status its type says, with its message as the thread's last error.
template <typename Body>
strata_status guard(strata_status onError, Body &&body) {
  try {
    body();
    lastError.clear();
    return STRATA_OK;
  } catch (const OutOfMemory &e) {
    return fail(STRATA_ERROR_OUT_OF_MEMORY, e.what());
  } catch (const Error &e) {
    return fail(onError, e.what());
  } catch (const std::bad_alloc &) {
    return fail(STRATA_ERROR_OUT_OF_MEMORY, "strata: out of memory");
  } catch (const std::exception &e) {
    return fail(STRATA_ERROR_INTERNAL,
                std::string("strata: internal error: ") + e.what());
  } catch (...) {
    return fail(STRATA_ERROR_INTERNAL,
                "strata: internal error: an unknown exception");
  }
}

strata_status nullArgument(const char *function, const char *argument) {
  return fail(STRATA_ERROR_INVALID_ARGUMENT,
              std::string(function) + ": " + argument + " is NULL");
}

void describe(const TensorSignature &sig, strata_tensor_info *info) {
  info->name = sig.name.c_str();
  info->dtype = static_cast<strata_dtype>(sig.dtype);
  info->rank = sig.shape.size();
  info->shape = sig.shape.data();
}

bool knownDType(strata_dtype dtype) {
  return static_cast<unsigned>(dtype) < kNumDTypes;
}

} // namespace

// The two enumerations must agree (module.fbs numbers both).
static_assert(STRATA_F32 == static_cast<int>(DType::F32) &&
              STRATA_BOOL == static_cast<int>(DType::I1) &&
              STRATA_U64 == static_cast<int>(DType::U64) &&
              STRATA_STRING == static_cast<int>(DType::String) &&
              kNumDTypes == STRATA_STRING + 1);

extern "C" {

const char *strata_version(void) { return STRATA_RUNTIME_VERSION; }

const char *strata_last_error(void) { return lastError.c_str(); }

const char *strata_status_name(strata_status status) {
  switch (status) {
  case STRATA_OK:
    return "STRATA_OK";
  case STRATA_ERROR_INVALID_ARGUMENT:
    return "STRATA_ERROR_INVALID_ARGUMENT";
  case STRATA_ERROR_INVALID_MODULE:
    return "STRATA_ERROR_INVALID_MODULE";
  case STRATA_ERROR_RUNTIME:
    return "STRATA_ERROR_RUNTIME";
  case STRATA_ERROR_OUT_OF_MEMORY:
    return "STRATA_ERROR_OUT_OF_MEMORY";
  case STRATA_ERROR_INTERNAL:
    return "STRATA_ERROR_INTERNAL";
  }
  return "<unknown strata_status>";
}

size_t strata_dtype_size(strata_dtype dtype) {
  if (!knownDType(dtype) || dtype == STRATA_STRING)
    return 0;
  return dtypeSize(static_cast<DType>(dtype));
}

const char *strata_dtype_name(strata_dtype dtype) {
  return dtypeName(static_cast<DType>(dtype));
}

strata_status strata_module_load(const char *path, strata_module **module) {
  if (!module)
    return nullArgument("strata_module_load", "module");
  *module = nullptr;
  if (!path)
    return nullArgument("strata_module_load", "path");
  return guard(STRATA_ERROR_INVALID_MODULE, [&] {
    auto result = std::make_unique<strata_module>();
    result->module = Module::load(path);
    *module = result.release();
  });
}

strata_status strata_module_load_from_memory(const void *bytes, size_t size,
                                             const char *name,
                                             strata_module **module) {
  if (!module)
    return nullArgument("strata_module_load_from_memory", "module");
  *module = nullptr;
  if (!bytes && size)
    return nullArgument("strata_module_load_from_memory", "bytes");
  return guard(STRATA_ERROR_INVALID_MODULE, [&] {
    const auto *begin = static_cast<const uint8_t *>(bytes);
    auto result = std::make_unique<strata_module>();
    result->module = Module::loadFromMemory(
        std::vector<uint8_t>(begin, begin + size), name ? name : "<memory>");
    *module = result.release();
  });
}

void strata_module_free(strata_module *module) { delete module; }

const char *strata_module_target(const strata_module *module) {
  return module ? module->module->target().c_str() : "";
}

size_t strata_module_num_inputs(const strata_module *module) {
  return module ? module->module->inputs().size() : 0;
}

size_t strata_module_num_outputs(const strata_module *module) {
  return module ? module->module->outputs().size() : 0;
}

static strata_status signature(const char *function,
                               const strata_module *module, size_t index,
                               strata_tensor_info *info, bool output) {
  if (!module)
    return nullArgument(function, "module");
  if (!info)
    return nullArgument(function, "info");
  const Module &m = *module->module;
  const auto &list = output ? m.outputs() : m.inputs();
  if (index >= list.size())
    return fail(STRATA_ERROR_INVALID_ARGUMENT,
                "strata module '" + m.name() + "' has no " +
                    (output ? "output " : "input ") + std::to_string(index) +
                    " (it has " + std::to_string(list.size()) + ")");
  describe(list[index], info);
  lastError.clear();
  return STRATA_OK;
}

strata_status strata_module_input(const strata_module *module, size_t index,
                                  strata_tensor_info *info) {
  return signature("strata_module_input", module, index, info, false);
}

strata_status strata_module_output(const strata_module *module, size_t index,
                                   strata_tensor_info *info) {
  return signature("strata_module_output", module, index, info, true);
}

strata_status strata_session_options_create(strata_session_options **options) {
  if (!options)
    return nullArgument("strata_session_options_create", "options");
  *options = nullptr;
  return guard(STRATA_ERROR_INTERNAL,
               [&] { *options = new strata_session_options(); });
}

void strata_session_options_free(strata_session_options *options) {
  delete options;
}

strata_status
strata_session_options_set_threads(strata_session_options *options,
                                   unsigned threads) {
  if (!options)
    return nullArgument("strata_session_options_set_threads", "options");
  options->options.threads = threads;
  return STRATA_OK;
}

strata_status
strata_session_options_set_cuda_device(strata_session_options *options,
                                       int device) {
  if (!options)
    return nullArgument("strata_session_options_set_cuda_device", "options");
  if (device < 0)
    return fail(STRATA_ERROR_INVALID_ARGUMENT,
                "strata_session_options_set_cuda_device: device " +
                    std::to_string(device) + " is negative");
  options->options.cuda.device = device;
  return STRATA_OK;
}

strata_status
strata_session_options_set_cuda_graphs(strata_session_options *options,
                                       int enabled) {
  if (!options)
    return nullArgument("strata_session_options_set_cuda_graphs", "options");
  options->options.cuda.graphs = enabled != 0;
  return STRATA_OK;
}

strata_status
strata_session_options_set_cuda_library_tuning(strata_session_options *options,
                                               int enabled) {
  if (!options)
    return nullArgument("strata_session_options_set_cuda_library_tuning",
                        "options");
  options->options.cuda.tuneLibrary = enabled != 0;
  return STRATA_OK;
}

strata_status
strata_session_options_set_cuda_library_choices(strata_session_options *options,
                                                const char *path) {
  if (!options)
    return nullArgument("strata_session_options_set_cuda_library_choices",
                        "options");
  if (path)
    options->options.cuda.libraryChoices = std::string(path);
  else
    options->options.cuda.libraryChoices.reset();
  return STRATA_OK;
}

strata_status strata_session_cuda_library_choices(strata_session *session,
                                                  const char **text) {
  const char *function = "strata_session_cuda_library_choices";
  if (!session)
    return nullArgument(function, "session");
  if (!text)
    return nullArgument(function, "text");
  *text = nullptr;
  return guard(STRATA_ERROR_INVALID_ARGUMENT, [&] {
    session->libraryChoices = cudaSessionInfo(*session->session).libraryChoices;
    *text = session->libraryChoices.c_str();
  });
}

strata_status strata_session_create(const strata_module *module,
                                    const strata_session_options *options,
                                    strata_session **session) {
  if (!session)
    return nullArgument("strata_session_create", "session");
  *session = nullptr;
  if (!module)
    return nullArgument("strata_session_create", "module");
  return guard(STRATA_ERROR_RUNTIME, [&] {
    auto result = std::make_unique<strata_session>();
    result->session = std::make_unique<Session>(
        module->module, options ? options->options : SessionOptions{});
    *session = result.release();
  });
}

void strata_session_free(strata_session *session) { delete session; }

/// strata_session_set_input and strata_session_bind_input: checks the
/// arguments and the byte count, then binds the input by a copy or by a
/// view of the caller's memory.
static strata_status setOrBindInput(const char *function,
                                    strata_session *session, const char *name,
                                    strata_dtype dtype, const int64_t *shape,
                                    size_t rank, const void *data, size_t size,
                                    bool copy) {
  if (!session)
    return nullArgument(function, "session");
  if (!name)
    return nullArgument(function, "name");
  if (!shape && rank)
    return nullArgument(function, "shape");
  if (!knownDType(dtype))
    return fail(STRATA_ERROR_INVALID_ARGUMENT,
                std::string(function) + ": input '" + name +
                    "': element type " + std::to_string(dtype) +
                    " is not a strata_dtype");
  if (dtype == STRATA_STRING)
    return fail(STRATA_ERROR_INVALID_ARGUMENT,
                std::string(function) + ": input '" + name +
                    "' is a tensor of strings, which only the C++ API binds");
  return guard(STRATA_ERROR_INVALID_ARGUMENT, [&] {
    Session &s = *session->session;
    size_t index = s.inputIndex(name);
    std::vector<int64_t> dims(shape, shape + rank);
    DType type = static_cast<DType>(dtype);
    // numElements checks for negative and overflowing dimensions before
    // anything is allocated.
    int64_t count = numElements(dims);
    size_t expected = static_cast<size_t>(count) * dtypeSize(type);
    if (count != 0 && expected / static_cast<size_t>(count) != dtypeSize(type))
      throw Error(std::string("input '") + name + "': " + dtypeName(type) +
                  shapeToString(dims) + " has too many bytes");
    if (size != expected)
      throw Error(std::string("input '") + name + "': " + dtypeName(type) +
                  shapeToString(dims) + " takes " + std::to_string(expected) +
                  " bytes, " + std::to_string(size) + " were given");
    if (size && !data)
      throw Error(std::string(function) + ": data is NULL");
    if (!copy) {
      // An empty tensor reads nothing: any address will do.
      static const uint64_t empty = 0;
      s.setInputView(index,
                     TensorView{type, std::move(dims),
                                const_cast<void *>(size ? data : &empty)});
      return;
    }
    Tensor tensor = Tensor::zeros(type, std::move(dims));
    if (size)
      std::memcpy(tensor.rawData(), data, size);
    s.setInput(index, std::move(tensor));
  });
}

strata_status strata_session_set_input(strata_session *session,
                                       const char *name, strata_dtype dtype,
                                       const int64_t *shape, size_t rank,
                                       const void *data, size_t size) {
  return setOrBindInput("strata_session_set_input", session, name, dtype, shape,
                        rank, data, size, /*copy=*/true);
}

strata_status strata_session_bind_input(strata_session *session,
                                        const char *name, strata_dtype dtype,
                                        const int64_t *shape, size_t rank,
                                        const void *data, size_t size) {
  return setOrBindInput("strata_session_bind_input", session, name, dtype,
                        shape, rank, data, size, /*copy=*/false);
}

strata_status strata_session_bind_output(strata_session *session,
                                         const char *name, void *data,
                                         size_t size) {
  const char *function = "strata_session_bind_output";
  if (!session)
    return nullArgument(function, "session");
  if (!name)
    return nullArgument(function, "name");
  return guard(STRATA_ERROR_INVALID_ARGUMENT, [&] {
    Session &s = *session->session;
    size_t index = s.outputIndex(name);
    if (!data) {
      if (size)
        throw Error(std::string(function) + ": data is NULL");
      s.unsetOutputView(index);
      return;
    }
    const TensorSignature &sig = s.module().outputs()[index];
    TensorView view{sig.dtype, sig.shape, data};
    if (sig.dtype != DType::String &&
        std::none_of(sig.shape.begin(), sig.shape.end(),
                     [](int64_t d) { return d < 0; })) {
      size_t expected = sig.byteSize();
      if (size != expected)
        throw Error(std::string("output '") + name +
                    "': " + dtypeName(sig.dtype) + shapeToString(sig.shape) +
                    " takes " + std::to_string(expected) + " bytes, " +
                    std::to_string(size) + " were given");
    }
    s.setOutputView(index, view);
  });
}

strata_status strata_session_run(strata_session *session) {
  if (!session)
    return nullArgument("strata_session_run", "session");
  return guard(STRATA_ERROR_RUNTIME, [&] { session->session->run(); });
}

strata_status strata_session_output(const strata_session *session,
                                    const char *name, strata_tensor_info *info,
                                    const void **data, size_t *size) {
  const char *function = "strata_session_output";
  if (!session)
    return nullArgument(function, "session");
  if (!name)
    return nullArgument(function, "name");
  return guard(STRATA_ERROR_INVALID_ARGUMENT, [&] {
    const Session &s = *session->session;
    size_t index = s.outputIndex(name);
    const Tensor &tensor = s.output(index);
    if (tensor.dtype() == DType::String)
      throw Error(std::string(function) + ": output '" + name +
                  "' is a tensor of strings, which only the C++ API reads");
    if (info) {
      info->name = s.module().outputs()[index].name.c_str();
      info->dtype = static_cast<strata_dtype>(tensor.dtype());
      info->rank = tensor.shape().size();
      info->shape = tensor.shape().data();
    }
    if (data)
      *data = tensor.rawData();
    if (size)
      *size = tensor.byteSize();
  });
}

} // extern "C"
