/*===- TestKernels.c - Stand-ins for generated kernels ----------*- C -*-===*\
|*                                                                          *|
|* Kernels with the generated-kernel ABI (docs/runtime.md), built as a      *|
|* shared object that the runtime tests embed in modules:                   *|
|*   void name(void *const *buffers, int64_t begin, int64_t end)            *|
|* with the step's inputs then outputs in `buffers`. Each kernel touches    *|
|* only its [begin, end) part, so a wrong split shows up in the results.    *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#include <math.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { kCols = 16 };

/* out = a + b over rows of kCols floats; one parallel index per row. */
EXPORT void strata_test_add(void *const *buffers, int64_t begin, int64_t end) {
  const float *a = buffers[0], *b = buffers[1];
  float *out = buffers[2];
  for (int64_t i = begin * kCols; i < end * kCols; ++i)
    out[i] = a[i] + b[i];
}

/* out = 3 * exp(log(x)) over floats; one parallel index per element. libm
   resolves from the process when the object is loaded. */
EXPORT void strata_test_scale(void *const *buffers, int64_t begin,
                              int64_t end) {
  const float *x = buffers[0];
  float *out = buffers[1];
  for (int64_t i = begin; i < end; ++i)
    out[i] = 3.0f * expf(logf(x[i]));
}

/* For every index i of [begin, end): out[i] = begin * 1000 + end, so that
   the test can rebuild the chunks the runtime made. */
EXPORT void strata_test_chunks(void *const *buffers, int64_t begin,
                               int64_t end) {
  int64_t *out = buffers[0];
  for (int64_t i = begin; i < end; ++i)
    out[i] = begin * 1000 + end;
}

/* out[0..1] = begin, end: without `parallel` the runtime calls (0, 1). */
EXPORT void strata_test_range(void *const *buffers, int64_t begin,
                              int64_t end) {
  int64_t *out = buffers[0];
  out[0] = begin;
  out[1] = end;
}

/* Not exported: a module must not be able to call it. */
void strata_test_hidden(void *const *buffers, int64_t begin, int64_t end) {
  (void)buffers;
  memset(buffers[0], 0, (size_t)(end - begin));
}

/* Exported, but data rather than a function. */
EXPORT const int strata_test_data = 42;
