/*===- runtime_c.h - The strata runtime's C API ------------------*- C -*-===*\
|*                                                                            *|
|* A small, stable C interface over the runtime (strata/Runtime/Runtime.h),   *|
|* for programs in C and for other languages' bindings: load a module, make   *|
|* sessions, bind inputs, run, read outputs. docs/embedding.md has a          *|
|* walk-through and examples/embed a complete program.                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* Conventions:
 * - Every function that can fail returns a strata_status. STRATA_OK is zero;
 *   on any other value the calling thread's strata_last_error() holds a
 *   one-line message naming the module, the tensor or the step concerned
 *   (the same text the C++ API's strata::rt::Error carries).
 * - Objects are opaque and freed by their own *_free function, which accepts
 *   NULL. A session keeps its module alive: the module may be freed first.
 * - Pointers returned by the library (names, shapes, output data) stay valid
 *   as stated at each function; the caller never frees them.
 * - Threads: a module may be shared by any number of sessions on any
 *   threads; a session is used by one thread at a time.
 * - Tensors are dense, row-major, in the element type the module declares.
 *   Tensors of strings (STRATA_STRING) are reachable from the C++ API only. */

#ifndef STRATA_RUNTIME_C_H
#define STRATA_RUNTIME_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_C_EXPORT __attribute__((visibility("default")))
#else
#define STRATA_C_EXPORT
#endif

/* Bumped when a function is added; existing functions keep their meaning. */
#define STRATA_C_API_VERSION 3

typedef enum strata_status {
  STRATA_OK = 0,
  /* A NULL pointer, an index out of range, an unknown input or output name,
   * or a tensor whose element type or shape the module does not accept. */
  STRATA_ERROR_INVALID_ARGUMENT = 1,
  /* The module file cannot be read, is truncated or corrupted, or is of a
   * format or target this runtime cannot run. */
  STRATA_ERROR_INVALID_MODULE = 2,
  /* A session could not be created or a run failed (a kernel's error, a
   * CUDA error, an input not set). */
  STRATA_ERROR_RUNTIME = 3,
  /* An allocation failed; the library stays usable. */
  STRATA_ERROR_OUT_OF_MEMORY = 4,
  /* Anything else: a bug in strata, please report it with the message. */
  STRATA_ERROR_INTERNAL = 5
} strata_status;

/* Element types; the numbering is the module format's (module.fbs). */
typedef enum strata_dtype {
  STRATA_F32 = 0,
  STRATA_F64 = 1,
  STRATA_F16 = 2,
  STRATA_BF16 = 3,
  STRATA_BOOL = 4, /* one byte per element */
  STRATA_I8 = 5,
  STRATA_I16 = 6,
  STRATA_I32 = 7,
  STRATA_I64 = 8,
  STRATA_U8 = 9,
  STRATA_U16 = 10,
  STRATA_U32 = 11,
  STRATA_U64 = 12,
  STRATA_STRING = 13
} strata_dtype;

typedef struct strata_module strata_module;
typedef struct strata_session strata_session;
typedef struct strata_session_options strata_session_options;

/* A tensor's description. For module inputs and outputs, -1 marks a
 * dynamic dimension; for a session's outputs every dimension is known. */
typedef struct strata_tensor_info {
  const char *name;
  strata_dtype dtype;
  size_t rank;
  const int64_t *shape;
} strata_tensor_info;

/* "0.3.0": the version of the library (strata's version). */
STRATA_C_EXPORT const char *strata_version(void);
/* The message of the calling thread's last failure ("" if none). Valid
 * until the thread's next call into the library. */
STRATA_C_EXPORT const char *strata_last_error(void);
/* "STRATA_ERROR_INVALID_MODULE" and so on. */
STRATA_C_EXPORT const char *strata_status_name(strata_status status);
/* Bytes per element of `dtype` (0 for STRATA_STRING and unknown values), and
 * its short name ("f32", "i64", "string"). */
STRATA_C_EXPORT size_t strata_dtype_size(strata_dtype dtype);
STRATA_C_EXPORT const char *strata_dtype_name(strata_dtype dtype);

/* Modules. A loaded module is verified (its checksum and structure) and
 * immutable. */
STRATA_C_EXPORT strata_status strata_module_load(const char *path,
                                                 strata_module **module);
/* The same for a module file in memory (copied; `name` stands for the file
 * in messages and may be NULL). */
STRATA_C_EXPORT strata_status strata_module_load_from_memory(
    const void *bytes, size_t size, const char *name, strata_module **module);
STRATA_C_EXPORT void strata_module_free(strata_module *module);
/* "cpu" or "cuda"; valid while the module lives. */
STRATA_C_EXPORT const char *strata_module_target(const strata_module *module);
STRATA_C_EXPORT size_t strata_module_num_inputs(const strata_module *module);
STRATA_C_EXPORT size_t strata_module_num_outputs(const strata_module *module);
/* The declared inputs and outputs; the pointers in `info` stay valid while
 * the module lives. */
STRATA_C_EXPORT strata_status strata_module_input(const strata_module *module,
                                                  size_t index,
                                                  strata_tensor_info *info);
STRATA_C_EXPORT strata_status strata_module_output(const strata_module *module,
                                                   size_t index,
                                                   strata_tensor_info *info);

/* Session options; a NULL options pointer means the defaults (one thread,
 * no profiling, CUDA device 0 with CUDA graphs). */
STRATA_C_EXPORT strata_status
strata_session_options_create(strata_session_options **options);
STRATA_C_EXPORT void
strata_session_options_free(strata_session_options *options);
/* Threads of the CPU pool, counting the caller; 0 means one per hardware
 * thread. */
STRATA_C_EXPORT strata_status strata_session_options_set_threads(
    strata_session_options *options, unsigned threads);
STRATA_C_EXPORT strata_status strata_session_options_set_cuda_device(
    strata_session_options *options, int device);
STRATA_C_EXPORT strata_status strata_session_options_set_cuda_graphs(
    strata_session_options *options, int enabled);
/* 0: run cuBLASLt's heuristic pick for every product, the same in every
 * session, instead of timing its candidates when the session is made
 * (SessionOptions::Cuda::tuneLibrary; unset, STRATA_CUBLASLT_TUNE decides).
 * API version 2. */
STRATA_C_EXPORT strata_status strata_session_options_set_cuda_library_tuning(
    strata_session_options *options, int enabled);
/* Pins every cuBLASLt call of a CUDA session to the algorithms of a choices
 * file (SessionOptions::Cuda::libraryChoices; NULL: STRATA_CUBLASLT_CHOICES
 * decides), as strata_session_cuda_library_choices wrote it. API version 3. */
STRATA_C_EXPORT strata_status strata_session_options_set_cuda_library_choices(
    strata_session_options *options, const char *path);

/* Sessions: the memory of one run at a time. */
STRATA_C_EXPORT strata_status strata_session_create(
    const strata_module *module, const strata_session_options *options,
    strata_session **session);
STRATA_C_EXPORT void strata_session_free(strata_session *session);
/* Binds input `name` to `size` bytes at `data` (copied) holding a tensor of
 * `dtype` and `shape`; its element type and static dimensions must match
 * the module's, and `size` must be exactly the tensor's bytes. */
STRATA_C_EXPORT strata_status strata_session_set_input(
    strata_session *session, const char *name, strata_dtype dtype,
    const int64_t *shape, size_t rank, const void *data, size_t size);
/* Binds input `name` as strata_session_set_input does, without a copy: the
 * runs read the `size` bytes at `data` in place, so they must hold the
 * input, unchanged, until the input is set or bound again or the session is
 * freed. (Memory not aligned to its element type, and CUDA sessions, which
 * upload their inputs, take a copy.) */
STRATA_C_EXPORT strata_status strata_session_bind_input(
    strata_session *session, const char *name, strata_dtype dtype,
    const int64_t *shape, size_t rank, const void *data, size_t size);
/* Has every run write output `name` into the `size` bytes at `data`, which
 * the caller owns (the output's static shape and element type, as
 * strata_module_output describes it; `size` must be exactly its bytes), until
 * it is bound again or the session is freed; NULL `data` (and `size` 0)
 * unbinds it. strata_session_output then refuses that output of the runs
 * that wrote it there. Outputs of strings or of shapes set at run time
 * cannot be bound. (Since STRATA_C_API_VERSION 3.) */
STRATA_C_EXPORT strata_status strata_session_bind_output(
    strata_session *session, const char *name, void *data, size_t size);
/* A CUDA session's cuBLASLt algorithms as the text of a choices file
 * (CudaSessionInfo::libraryChoices; empty without library calls), valid until
 * the session is freed or this is called again; an error for a CPU session.
 * API version 3. */
STRATA_C_EXPORT strata_status
strata_session_cuda_library_choices(strata_session *session, const char **text);
/* Runs the module on the bound inputs; every input must be bound. */
STRATA_C_EXPORT strata_status strata_session_run(strata_session *session);
/* Output `name` of the last run: its description, its bytes and their
 * count (any of info, data and size may be NULL). Everything stays valid
 * until the session's next run or its end. */
STRATA_C_EXPORT strata_status strata_session_output(
    const strata_session *session, const char *name, strata_tensor_info *info,
    const void **data, size_t *size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_RUNTIME_C_H */
