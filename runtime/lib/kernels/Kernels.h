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
/// The host kernels of graph ops on shapes known only at run time
/// (HostOps.cpp): "host.<op>" for the graph op <op> ("host.gather_nd"), and
/// "host.guard" and "host.merge" for run-time If.
void registerHostOpKernels(
    const std::function<void(const std::string &, KernelFn)> &add);
/// "host.loop" (HostLoop.cpp): an ONNX Loop whose trip count or condition
/// is known only at run time, its body run as host kernels.
void registerHostLoopKernel(
    const std::function<void(const std::string &, KernelFn)> &add);

/// "f32[2, 3]": a tensor's type and shape, for kernels' messages.
inline std::string describe(const TensorView &view) {
  return std::string(dtypeName(view.dtype)) + shapeToString(view.shape);
}

/// The product of shape[begin, end).
inline int64_t product(const std::vector<int64_t> &shape, size_t begin,
                       size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

/// Calls fn(T()) with T the C++ type of `type` when it is f32, f64 or an 8-
/// to 64-bit integer; false for the other types (bool, f16, bf16, strings),
/// which each kernel treats its own way.
template <typename Fn> inline bool dispatchNumeric(DType type, Fn &&fn) {
  switch (type) {
  case DType::F32:
    fn(float());
    return true;
  case DType::F64:
    fn(double());
    return true;
  case DType::I8:
    fn(int8_t());
    return true;
  case DType::I16:
    fn(int16_t());
    return true;
  case DType::I32:
    fn(int32_t());
    return true;
  case DType::I64:
    fn(int64_t());
    return true;
  case DType::U8:
    fn(uint8_t());
    return true;
  case DType::U16:
    fn(uint16_t());
    return true;
  case DType::U32:
    fn(uint32_t());
    return true;
  case DType::U64:
    fn(uint64_t());
    return true;
  default:
    return false;
  }
}

} // namespace strata::rt::kernels

#endif // STRATA_RUNTIME_LIB_KERNELS_KERNELS_H
