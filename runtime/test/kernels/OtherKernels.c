/*===- OtherKernels.c - A second object of stand-in kernels -----*- C -*-===*\
|*                                                                          *|
|* Another module's generated code, with a kernel TestKernels.c does not    *|
|* have: two modules whose code differs must each run their own, also when  *|
|* both are loaded at once (GeneratedKernelTest.cpp).                       *|
|*                                                                          *|
\*===----------------------------------------------------------------------===*/

#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* out[i] = 7000 + i over [begin, end). */
EXPORT void strata_other_fill(void *const *buffers, int64_t begin,
                              int64_t end) {
  int64_t *out = buffers[0];
  for (int64_t i = begin; i < end; ++i)
    out[i] = 7000 + i;
}
