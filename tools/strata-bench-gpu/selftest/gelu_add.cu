//===- gelu_add.cu - Hand-written kernel for the harness self-test -*- CUDA
//-*-===//
//
// y = gelu(a + b) + r over bf16 tensors, 8 elements (16 bytes) per thread,
// in float: the workload gelu_add_bf16 of bench/gpu/workloads.py. It only
// exists to test the GPU benchmark's strata path (strata-bench-gpu and
// run.py --strata-modules) before the compiler emits CUDA; its numbers are
// never reported as strata's. ABI: docs/runtime.md, "The CUDA executor".
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>

extern "C" __global__ void __launch_bounds__(256)
    selftest_gelu_add_bf16(const uint4 *__restrict__ a,
                           const uint4 *__restrict__ b,
                           const uint4 *__restrict__ r, uint4 *__restrict__ y) {
  // The grid covers the tensor exactly (16384 x 4096 / 8 / 256 blocks).
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  uint4 va = a[i], vb = b[i], vr = r[i], out;
  const __nv_bfloat162 *pa = reinterpret_cast<const __nv_bfloat162 *>(&va);
  const __nv_bfloat162 *pb = reinterpret_cast<const __nv_bfloat162 *>(&vb);
  const __nv_bfloat162 *pr = reinterpret_cast<const __nv_bfloat162 *>(&vr);
  __nv_bfloat162 *po = reinterpret_cast<__nv_bfloat162 *>(&out);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    float2 x = __bfloat1622float2(pa[k]), z = __bfloat1622float2(pb[k]);
    float2 s = __bfloat1622float2(pr[k]);
    x.x += z.x;
    x.y += z.y;
    x.x = 0.5f * x.x * (1.0f + erff(x.x * 0.70710678118654752f)) + s.x;
    x.y = 0.5f * x.y * (1.0f + erff(x.y * 0.70710678118654752f)) + s.y;
    po[k] = __float22bfloat162_rn(x);
  }
  y[i] = out;
}
