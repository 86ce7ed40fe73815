//===- TestKernels.cu - Stand-ins for compiled GPU kernels ------*- CUDA
//-*-===//
//
// Hand-written kernels with the ABI the CUDA executor gives generated ones
// (docs/runtime.md): extern "C", one device pointer per step input, then
// per step output; sizes come from the launch (grid and block attributes),
// as compiled kernels have their static shapes built in. The build compiles
// this file with nvcc to PTX (sm_90a) and to cubins for sm_90a and sm_80,
// which CudaKernelTest.cpp embeds in modules.
//
//===----------------------------------------------------------------------===//

/// z = x + y over one element per thread (a 1-D grid).
extern "C" __global__ void strata_cuda_add(const float *x, const float *y,
                                           float *z) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  z[i] = x[i] + y[i];
}

/// z = x + y over two elements per thread, i and i + the launch's threads:
/// the same result as strata_cuda_add from half its threads (the portable
/// PTX's own launch of a step, CudaKernelTest.cpp). Launched with
/// strata_cuda_add's grid it would write past z.
extern "C" __global__ void strata_cuda_add_pairs(const float *x, const float *y,
                                                 float *z) {
  unsigned threads = gridDim.x * blockDim.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  z[i] = x[i] + y[i];
  z[i + threads] = x[i + threads] + y[i + threads];
}

/// w[r][c] = 2.5 * z[r][c] + bias[c] with rows along grid y and columns
/// along grid x (a 2-D grid; `bias` is a module constant).
extern "C" __global__ void strata_cuda_scale_bias(const float *z,
                                                  const float *bias, float *w) {
  unsigned cols = gridDim.x * blockDim.x;
  unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned i = blockIdx.y * cols + c;
  w[i] = 2.5f * z[i] + bias[c];
}

/// out[i] = in[(i + n / 2 + 1) % n] + 1 over n = gridDim.x * blockDim.x
/// elements, after waiting for the grids before it: a kernel the runtime
/// may launch with programmatic dependent launch (the step's
/// launch's waits_for_grids), as strata's own kernels begin. Each element
/// reads one that a block half the grid away wrote in the step before, so
/// a launch that did not wait would read stale values.
extern "C" __global__ void strata_cuda_rotate_add_one(const float *in,
                                                      float *out) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  unsigned n = gridDim.x * blockDim.x;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[(i + n / 2 + 1) % n] + 1.0f;
}

/// Reverses each block's chunk of `in` through dynamic shared memory (the
/// launch's shared_bytes, at least blockDim.x floats). The block's last
/// thread also writes, at the chunk's end of `sizes`, how many bytes of
/// dynamic shared memory the launch gave, read from %dynamic_smem_size.
extern "C" __global__ void
strata_cuda_reverse_blocks(const float *in, float *out, unsigned *sizes) {
  extern __shared__ float chunk[];
  unsigned base = blockIdx.x * blockDim.x;
  chunk[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = chunk[blockDim.x - 1 - threadIdx.x];
  if (threadIdx.x == 0) {
    unsigned bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    sizes[blockIdx.x] = bytes;
  }
}

/// Breaks the ABI on purpose: its second parameter is an int, not a device
/// pointer; the executor must refuse it when the session is created.
extern "C" __global__ void strata_cuda_scalar_param(float *out, int value) {
  out[threadIdx.x] = static_cast<float>(value);
}

/// Copies box (blockIdx.x, blockIdx.y) of `in`, a [64, 64] f32 tensor in
/// boxes of 32 x 16, to the same place of `out` through shared memory, by
/// one TMA copy that the step's first tensor map describes (no swizzle):
/// the executor's tensor maps (docs/runtime.md, "Tensor maps") are right
/// when `out` equals `in`. `maps` is the pointer the executor passes after
/// the outputs.
extern "C" __global__ void strata_cuda_tma_copy(const float *in, float *out,
                                                const void *maps) {
#if __CUDA_ARCH__ >= 900
  __shared__ alignas(128) float box[16][32];
  __shared__ alignas(8) unsigned long long barrier;
  unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(box));
  int x = blockIdx.x * 32, y = blockIdx.y * 16;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile(
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
        "r"(16 * 32 * 4)
        : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile."
        "mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
        "l"(maps), "r"(x), "r"(y), "r"(bar)
        : "memory");
  }
  asm volatile("{\n.reg .pred done;\nstrata_wait:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               "@!done bra strata_wait;\n}" ::"r"(bar)
               : "memory");
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x)
    out[(y + i / 32) * 64 + x + i % 32] = box[i / 32][i % 32];
#else
  (void)in, (void)out, (void)maps;
#endif
}
