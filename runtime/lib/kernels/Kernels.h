//===- Kernels.h - Registration of the built-in kernels ---------*- C++ -*-===//
//
// Each file of built-in kernels exports one function that registers them.
// The registry calls these when it is first used rather than relying on
// static initializers, which the linker drops from a static library when
// nothing else in their object file is referenced.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_KERNELS_KERNELS_H
#define STRATA_RUNTIME_LIB_KERNELS_KERNELS_H

#include "strata/Runtime/Runtime.h"

namespace strata::rt::kernels {

void registerBasicKernels(
    const std::function<void(const std::string &, KernelFn)> &add);
/// "dnnl.matmul", "dnnl.conv" and "dnnl.pool" (Dnnl*.cpp).
void registerDnnlKernels(
    const std::function<void(const std::string &, KernelFn)> &add);
/// The host kernels for tensors of strings (Strings.cpp):
/// "string.normalizer", "string.cast" and "string.copy".
void registerStringKernels(
    const std::function<void(const std::string &, KernelFn)> &add);
/// The host kernels for outputs whose shape depends on values
/// (ValueShaped.cpp): "host.nonzero", "host.compress", "host.unique" and
/// "host.non_max_suppression".
void registerValueShapedKernels(
    const std::function<void(const std::string &, KernelFn)> &add);

} // namespace strata::rt::kernels

#endif // STRATA_RUNTIME_LIB_KERNELS_KERNELS_H
