// Row-kernel structures, measured side by side on one GPU: which way of
// laying a row reduction (RMSNorm, softmax) over a thread block keeps device
// memory busy. Hand-written CUDA, not strata's output: it decides what
// strata-gpu-map should generate (docs/gpu.md, "Row kernels"). Build and run
// on the device machine:
//
//   nvcc -O3 -arch=sm_90a -std=c++17 rows.cu -o rows && ./rows
//
// Each variant is checked against a float64 reference on the host before it
// is timed (CUDA events, median of 50 launches after 5 warm-ups).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,           \
                   cudaGetErrorString(e));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

using bf16 = __nv_bfloat16;

__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Whole-block sum: shuffles, one value per warp in shared memory, shuffles.
template <int T> __device__ __forceinline__ float blockSum(float v, float *s) {
  v = warpSum(v);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    s[warp] = v;
  __syncthreads();
  v = lane < T / 32 ? s[lane] : 0.f;
  v = warpSum(v);
  __syncthreads();
  return v;
}
template <int T> __device__ __forceinline__ float blockMax(float v, float *s) {
  v = warpMax(v);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    s[warp] = v;
  __syncthreads();
  v = lane < T / 32 ? s[lane] : -INFINITY;
  v = warpMax(v);
  __syncthreads();
  return v;
}

// ---------------------------------------------------------------- RMSNorm
// y = bf16(float(x) * rsqrt(mean(float(x)^2) + 1e-6) * w), rows of R bf16.
constexpr int kRmsR = 4096;

// What strata generates today: the f32 copy of the row in shared memory,
// one op after another with a barrier after each.
template <int T>
__global__ __launch_bounds__(T) void rmsShared(const bf16 *x, const float *w,
                                               bf16 *y) {
  __shared__ __align__(16) float row[kRmsR];
  __shared__ float red[32];
  const bf16 *xr = x + size_t(blockIdx.x) * kRmsR;
  for (int g = threadIdx.x; g < kRmsR / 8; g += T) {
    uint4 v = reinterpret_cast<const uint4 *>(xr)[g];
    const bf16 *e = reinterpret_cast<const bf16 *>(&v);
    for (int j = 0; j < 8; ++j)
      row[g * 8 + j] = __bfloat162float(e[j]);
  }
  __syncthreads();
  float acc = 0;
  for (int g = threadIdx.x; g < kRmsR / 4; g += T) {
    float4 v = reinterpret_cast<float4 *>(row)[g];
    acc += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
  }
  float r = rsqrtf(blockSum<T>(acc, red) / kRmsR + 1e-6f);
  bf16 *yr = y + size_t(blockIdx.x) * kRmsR;
  for (int g = threadIdx.x; g < kRmsR / 8; g += T) {
    uint4 o;
    bf16 *e = reinterpret_cast<bf16 *>(&o);
    for (int j = 0; j < 8; ++j)
      e[j] = __float2bfloat16(row[g * 8 + j] * r * w[g * 8 + j]);
    reinterpret_cast<uint4 *>(yr)[g] = o;
  }
}

// A thread's groups of 8 bf16: the sum of their squares, and y = x * inv * w
// written back (w as bf16 groups too), for the kernels below.
template <int N> __device__ __forceinline__ float sumSquares(const uint4 *v) {
  float acc = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const bf16 *e = reinterpret_cast<const bf16 *>(&v[k]);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      float f = __bfloat162float(e[j]);
      acc += f * f;
    }
  }
  return acc;
}
template <int N, int T, bool Streaming = false>
__device__ __forceinline__ void writeScaled(uint4 *yr, const uint4 *v,
                                            const uint4 *wv, float inv, int t) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const bf16 *e = reinterpret_cast<const bf16 *>(&v[k]);
    const bf16 *we = reinterpret_cast<const bf16 *>(&wv[k]);
    uint4 o;
    bf16 *oe = reinterpret_cast<bf16 *>(&o);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      oe[j] = __float2bfloat16(__bfloat162float(e[j]) * inv *
                               __bfloat162float(we[j]));
    if constexpr (Streaming)
      __stcs(yr + t + k * T, o);
    else
      yr[t + k * T] = o;
  }
}

// The row in registers: each thread loads its N groups of 8 at once, rows
// of one block per ROWS (T threads per row).
template <int T, int ROWS>
__global__ __launch_bounds__(T *ROWS) void rmsRegs(const bf16 *x,
                                                   const float *w, bf16 *y) {
  constexpr int N = kRmsR / 8 / T;
  __shared__ float red[ROWS][32];
  int sub = threadIdx.x / T, t = threadIdx.x % T;
  size_t rowIndex = size_t(blockIdx.x) * ROWS + sub;
  const uint4 *xr = reinterpret_cast<const uint4 *>(x + rowIndex * kRmsR);
  uint4 v[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    v[k] = xr[t + k * T];
  float acc = warpSum(sumSquares<N>(v));
  if (T > 32) {
    int lane = t % 32, warp = t / 32;
    if (lane == 0)
      red[sub][warp] = acc;
    __syncthreads();
    acc = warpSum(lane < T / 32 ? red[sub][lane] : 0.f);
  }
  float r = rsqrtf(acc / kRmsR + 1e-6f);
  uint4 *yr = reinterpret_cast<uint4 *>(y + rowIndex * kRmsR);
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const bf16 *e = reinterpret_cast<const bf16 *>(&v[k]);
    const float4 *wg = reinterpret_cast<const float4 *>(w) + (t + k * T) * 2;
    float4 w0 = wg[0], w1 = wg[1];
    float ws[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    uint4 o;
    bf16 *oe = reinterpret_cast<bf16 *>(&o);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      oe[j] = __float2bfloat16(__bfloat162float(e[j]) * r * ws[j]);
    yr[t + k * T] = o;
  }
}

// The structure strata generates for RMSNorm (a bf16 weight cast in the
// kernel, 256 threads with two groups of 8), and changes to it, one flag
// each: kOneBarrier (every warp combines the warps' partial sums itself,
// instead of warp 0 combining them and publishing the total behind a second
// barrier), kEarlyWeight (the weight's loads issued with the row's),
// kStreaming (x read with ld.global.cs and y written with st.global.cs, so
// neither displaces the weight in L1/L2), kPersistent (a grid of 8 blocks per
// SM walks the rows, each block loading its next row before it reduces and
// writes the current one).
enum : unsigned {
  kOneBarrier = 1,
  kEarlyWeight = 2,
  kStreaming = 4,
  kPersistent = 8,
};
template <unsigned F>
__global__ __launch_bounds__(256) void rmsVariant(const bf16 *x, const bf16 *w,
                                                  bf16 *y, int rows) {
  constexpr int T = 256, N = kRmsR / 8 / T;
  __shared__ float red[32];
  __shared__ float total;
  int t = threadIdx.x, lane = t % 32, warp = t / 32;
  auto load = [&](const uint4 *p) {
    if constexpr (F & kStreaming)
      return __ldcs(p);
    else
      return __ldg(p);
  };
  const uint4 *wg = reinterpret_cast<const uint4 *>(w);
  uint4 v[N], next[N], wv[N];
  int row = blockIdx.x;
  const int step = (F & kPersistent) ? gridDim.x : rows;
  if (row >= rows)
    return;
#pragma unroll
  for (int k = 0; k < N; ++k)
    next[k] = load(reinterpret_cast<const uint4 *>(x + size_t(row) * kRmsR) +
                   t + k * T);
  for (; row < rows; row += step) {
#pragma unroll
    for (int k = 0; k < N; ++k)
      v[k] = next[k];
    if constexpr (F & kPersistent) {
      if (row + step < rows) {
#pragma unroll
        for (int k = 0; k < N; ++k)
          next[k] = load(
              reinterpret_cast<const uint4 *>(x + size_t(row + step) * kRmsR) +
              t + k * T);
      }
    }
    if constexpr (F & kEarlyWeight) {
#pragma unroll
      for (int k = 0; k < N; ++k)
        wv[k] = __ldg(wg + t + k * T);
    }
    float acc = sumSquares<N>(v);
    acc = warpSum(acc);
    if (lane == 0)
      red[warp] = acc;
    __syncthreads();
    if constexpr (F & kOneBarrier) {
      acc = warpSum(lane < T / 32 ? red[lane] : 0.f);
      if constexpr (F & kPersistent)
        __syncthreads(); // red[] is rewritten by the next row
    } else {
      if (warp == 0) {
        acc = warpSum(lane < T / 32 ? red[lane] : 0.f);
        if (lane == 0)
          total = acc;
      }
      __syncthreads();
      acc = total;
      if constexpr (F & kPersistent)
        __syncthreads();
    }
    float r = rsqrtf(acc / kRmsR + 1e-6f);
    if constexpr (!(F & kEarlyWeight)) {
#pragma unroll
      for (int k = 0; k < N; ++k)
        wv[k] = __ldg(wg + t + k * T);
    }
    writeScaled<N, T, bool(F & kStreaming)>(
        reinterpret_cast<uint4 *>(y + size_t(row) * kRmsR), v, wv, r, t);
  }
}

// Two rows per block (ROWS = 2 or 4): each thread reads the same weight
// groups once for all of its rows, and one barrier serves them all.
template <int ROWS>
__global__ __launch_bounds__(256) void rmsRowsPerBlock(const bf16 *x,
                                                       const bf16 *w, bf16 *y) {
  constexpr int T = 256, N = kRmsR / 8 / T;
  __shared__ float red[ROWS][8];
  int t = threadIdx.x, lane = t % 32, warp = t / 32;
  size_t row0 = size_t(blockIdx.x) * ROWS;
  uint4 v[ROWS][N];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int k = 0; k < N; ++k)
      v[r][k] = __ldg(reinterpret_cast<const uint4 *>(x + (row0 + r) * kRmsR) +
                      t + k * T);
  float acc[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    acc[r] = warpSum(sumSquares<N>(v[r]));
    if (lane == 0)
      red[r][warp] = acc[r];
  }
  __syncthreads();
  const uint4 *wg = reinterpret_cast<const uint4 *>(w);
  uint4 wv[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    wv[k] = __ldg(wg + t + k * T);
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    float total = warpSum(lane < 8 ? red[r][lane] : 0.f);
    float inv = rsqrtf(total / kRmsR + 1e-6f);
    writeScaled<N, T>(reinterpret_cast<uint4 *>(y + (row0 + r) * kRmsR), v[r],
                      wv, inv, t);
  }
}

// Persistent blocks that keep their weight groups in registers for every
// row they walk, loading the next row before reducing the current one.
__global__ __launch_bounds__(256) void rmsPersistentWeight(const bf16 *x,
                                                           const bf16 *w,
                                                           bf16 *y, int rows) {
  constexpr int T = 256, N = kRmsR / 8 / T;
  __shared__ float red[2][8];
  int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const uint4 *wg = reinterpret_cast<const uint4 *>(w);
  uint4 wv[N], v[N], next[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    wv[k] = __ldg(wg + t + k * T);
  int row = blockIdx.x;
#pragma unroll
  for (int k = 0; k < N; ++k)
    next[k] = __ldg(reinterpret_cast<const uint4 *>(x + size_t(row) * kRmsR) +
                    t + k * T);
  for (int parity = 0; row < rows; row += gridDim.x, parity ^= 1) {
#pragma unroll
    for (int k = 0; k < N; ++k)
      v[k] = next[k];
    if (row + gridDim.x < rows) {
#pragma unroll
      for (int k = 0; k < N; ++k)
        next[k] = __ldg(reinterpret_cast<const uint4 *>(
                            x + size_t(row + gridDim.x) * kRmsR) +
                        t + k * T);
    }
    float acc = sumSquares<N>(v);
    acc = warpSum(acc);
    if (lane == 0)
      red[parity][warp] = acc; // alternate slots: one barrier per row
    __syncthreads();
    float inv =
        rsqrtf(warpSum(lane < 8 ? red[parity][lane] : 0.f) / kRmsR + 1e-6f);
    writeScaled<N, T>(reinterpret_cast<uint4 *>(y + size_t(row) * kRmsR), v, wv,
                      inv, t);
  }
}

// ---------------------------------------------------------------- softmax
// Rows of R f32.
template <int R, int T>
__global__ __launch_bounds__(T) void softmaxShared(const float *x, float *y) {
  extern __shared__ __align__(16) float row[];
  __shared__ float red[32];
  const float4 *xr =
      reinterpret_cast<const float4 *>(x + size_t(blockIdx.x) * R);
  constexpr int G = R / 4;
  // As strata stages: up to 8 loads in flight per thread, then stores.
  for (int base = threadIdx.x; base < G; base += 8 * T) {
    float4 v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (base + u * T < G)
        v[u] = xr[base + u * T];
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (base + u * T < G)
        reinterpret_cast<float4 *>(row)[base + u * T] = v[u];
  }
  __syncthreads();
  float m = -INFINITY;
  for (int g = threadIdx.x; g < G; g += T) {
    float4 v = reinterpret_cast<float4 *>(row)[g];
    m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
  }
  m = blockMax<T>(m, red);
  float s = 0;
  for (int g = threadIdx.x; g < G; g += T) {
    float4 v = reinterpret_cast<float4 *>(row)[g];
    s += __expf(v.x - m) + __expf(v.y - m) + __expf(v.z - m) + __expf(v.w - m);
  }
  s = blockSum<T>(s, red);
  float inv = 1.f / s;
  float4 *yr = reinterpret_cast<float4 *>(y + size_t(blockIdx.x) * R);
  for (int g = threadIdx.x; g < G; g += T) {
    float4 v = reinterpret_cast<float4 *>(row)[g];
    yr[g] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                        __expf(v.z - m) * inv, __expf(v.w - m) * inv);
  }
}

// The row in registers: N float4 per thread.
template <int R, int T>
__global__ __launch_bounds__(T) void softmaxRegs(const float *x, float *y) {
  constexpr int N = R / 4 / T;
  __shared__ float red[32];
  const float4 *xr =
      reinterpret_cast<const float4 *>(x + size_t(blockIdx.x) * R);
  float4 v[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    v[k] = xr[threadIdx.x + k * T];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < N; ++k)
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  m = blockMax<T>(m, red);
  float s = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    v[k].x = __expf(v[k].x - m);
    v[k].y = __expf(v[k].y - m);
    v[k].z = __expf(v[k].z - m);
    v[k].w = __expf(v[k].w - m);
    s += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  s = blockSum<T>(s, red);
  float inv = 1.f / s;
  float4 *yr = reinterpret_cast<float4 *>(y + size_t(blockIdx.x) * R);
#pragma unroll
  for (int k = 0; k < N; ++k)
    yr[threadIdx.x + k * T] =
        make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
}

// A row split over a cluster of C blocks, each holding its part in
// registers; the blocks combine their partial max and sum through
// distributed shared memory.
template <int R, int T, int C>
__global__ __launch_bounds__(T) void softmaxCluster(const float *x, float *y) {
  constexpr int P = R / C;     // elements per block
  constexpr int N = P / 4 / T; // float4 per thread
  __shared__ float red[32];
  __shared__ float part[2];
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  size_t rowIndex = blockIdx.x / C;
  const float4 *xr =
      reinterpret_cast<const float4 *>(x + rowIndex * R + size_t(rank) * P);
  float4 v[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    v[k] = xr[threadIdx.x + k * T];
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < N; ++k)
    m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  m = blockMax<T>(m, red);
  if (threadIdx.x == 0)
    part[0] = m;
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
  // Every thread reads the C partial maxima.
  float gm = -INFINITY;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(&part[0]));
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"(local), "r"(c));
    float pm;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(pm) : "r"(remote));
    gm = fmaxf(gm, pm);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    v[k].x = __expf(v[k].x - gm);
    v[k].y = __expf(v[k].y - gm);
    v[k].z = __expf(v[k].z - gm);
    v[k].w = __expf(v[k].w - gm);
    s += v[k].x + v[k].y + v[k].z + v[k].w;
  }
  s = blockSum<T>(s, red);
  if (threadIdx.x == 0)
    part[1] = s;
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
  float gs = 0;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(&part[1]));
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote)
                 : "r"(local), "r"(c));
    float ps;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(ps) : "r"(remote));
    gs += ps;
  }
  // No block may leave while another still reads its shared memory.
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  float inv = 1.f / gs;
  float4 *yr = reinterpret_cast<float4 *>(y + rowIndex * R + size_t(rank) * P);
#pragma unroll
  for (int k = 0; k < N; ++k)
    yr[threadIdx.x + k * T] =
        make_float4(v[k].x * inv, v[k].y * inv, v[k].z * inv, v[k].w * inv);
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Two passes over global memory: an online max and sum, then the output
// (the second read mostly from L2), as Inductor's looped reductions do.
template <int R, int T>
__global__ __launch_bounds__(T) void softmaxOnline(const float *x, float *y) {
  __shared__ float red[32];
  const float4 *xr =
      reinterpret_cast<const float4 *>(x + size_t(blockIdx.x) * R);
  constexpr int G = R / 4;
  float m = -INFINITY, s = 0;
  for (int g = threadIdx.x; g < G; g += T) {
    float4 v = xr[g];
    float nm = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    s = s * __expf(m - nm) + __expf(v.x - nm) + __expf(v.y - nm) +
        __expf(v.z - nm) + __expf(v.w - nm);
    m = nm;
  }
  float gm = blockMax<T>(m, red);
  s = blockSum<T>(m == -INFINITY ? 0.f : s * __expf(m - gm), red);
  float inv = 1.f / s;
  float4 *yr = reinterpret_cast<float4 *>(y + size_t(blockIdx.x) * R);
  for (int g = threadIdx.x; g < G; g += T) {
    float4 v = xr[g];
    yr[g] = make_float4(__expf(v.x - gm) * inv, __expf(v.y - gm) * inv,
                        __expf(v.z - gm) * inv, __expf(v.w - gm) * inv);
  }
}

// ---------------------------------------------------------------- harness
static float timeMs(const std::function<void()> &launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i)
    launch();
  CHECK(cudaGetLastError());
  std::vector<float> t;
  for (int i = 0; i < 50; ++i) {
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static double copyTbps;

static void report(const char *name, float ms, double bytes, double err) {
  double tbps = bytes / (ms * 1e-3) / 1e12;
  std::printf("%-34s %8.4f ms %6.2f TB/s %5.1f%% of copy  rel_err %.2e\n", name,
              ms, tbps, 100 * tbps / copyTbps, err);
}

int main() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  {
    size_t n = size_t(1) << 30; // 1 GiB each way
    void *a, *b;
    CHECK(cudaMalloc(&a, n));
    CHECK(cudaMalloc(&b, n));
    CHECK(cudaMemset(a, 1, n));
    float ms = timeMs(
        [&] { CHECK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice)); });
    copyTbps = 2.0 * n / (ms * 1e-3) / 1e12;
    std::printf("%-34s %8.4f ms %6.2f TB/s\n", "copy 1 GiB", ms, copyTbps);
    // The RMSNorm's own size (128 MiB each way): what a copy of that many
    // bytes in one launch reaches, ramp and tail included.
    size_t small = size_t(128) << 20;
    float smallMs = timeMs(
        [&] { CHECK(cudaMemcpyAsync(b, a, small, cudaMemcpyDeviceToDevice)); });
    std::printf("%-34s %8.4f ms %6.2f TB/s %5.1f%% of copy\n", "copy 128 MiB",
                smallMs, 2.0 * small / (smallMs * 1e-3) / 1e12,
                100.0 * 2.0 * small / (smallMs * 1e-3) / 1e12 / copyTbps);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }

  // RMSNorm bf16 16384 x 4096.
  {
    const int M = 16384, R = kRmsR;
    std::vector<bf16> hx(size_t(M) * R);
    std::vector<float> hw(R), hxf(size_t(M) * R);
    for (size_t i = 0; i < hx.size(); ++i) {
      hx[i] = __float2bfloat16(normal(rng));
      hxf[i] = __bfloat162float(hx[i]);
    }
    for (int i = 0; i < R; ++i)
      hw[i] = __bfloat162float(__float2bfloat16(1.f + 0.1f * normal(rng)));
    std::vector<double> ref(size_t(M) * R);
    for (int r = 0; r < M; ++r) {
      double ss = 0;
      for (int c = 0; c < R; ++c)
        ss += double(hxf[size_t(r) * R + c]) * hxf[size_t(r) * R + c];
      double inv = 1 / std::sqrt(ss / R + 1e-6);
      for (int c = 0; c < R; ++c)
        ref[size_t(r) * R + c] = hxf[size_t(r) * R + c] * inv * hw[c];
    }
    bf16 *x, *y;
    float *w;
    CHECK(cudaMalloc(&x, hx.size() * 2));
    CHECK(cudaMalloc(&y, hx.size() * 2));
    CHECK(cudaMalloc(&w, R * 4));
    CHECK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(w, hw.data(), R * 4, cudaMemcpyHostToDevice));
    double bytes = 2.0 * M * R * 2;
    std::vector<bf16> hy(hx.size());
    auto run = [&](const char *name, std::function<void()> launch) {
      CHECK(cudaMemset(y, 0xff, hx.size() * 2));
      launch();
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(hy.data(), y, hy.size() * 2, cudaMemcpyDeviceToHost));
      double num = 0, den = 0;
      for (size_t i = 0; i < hy.size(); ++i) {
        double d = __bfloat162float(hy[i]) - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
      }
      double err = std::sqrt(num / den);
      if (!(err < 1e-2))
        std::printf("%s: WRONG (rel_err %g)\n", name, err);
      report(name, timeMs(launch), bytes, err);
    };
    run("rms shared T256", [&] { rmsShared<256><<<M, 256>>>(x, w, y); });
    run("rms shared T512", [&] { rmsShared<512><<<M, 512>>>(x, w, y); });
    run("rms regs T64", [&] { rmsRegs<64, 1><<<M, 64>>>(x, w, y); });
    run("rms regs T128", [&] { rmsRegs<128, 1><<<M, 128>>>(x, w, y); });
    run("rms regs T256", [&] { rmsRegs<256, 1><<<M, 256>>>(x, w, y); });
    run("rms regs T512", [&] { rmsRegs<512, 1><<<M, 512>>>(x, w, y); });
    run("rms regs warp/row x4",
        [&] { rmsRegs<32, 4><<<M / 4, 128>>>(x, w, y); });
    run("rms regs warp/row x8",
        [&] { rmsRegs<32, 8><<<M / 8, 256>>>(x, w, y); });
    run("rms regs T128 x2 rows",
        [&] { rmsRegs<128, 2><<<M / 2, 256>>>(x, w, y); });
    // strata's structure and one change at a time (bf16 weight).
    bf16 *wb;
    {
      std::vector<bf16> hwb(R);
      for (int i = 0; i < R; ++i)
        hwb[i] = __float2bfloat16(hw[i]);
      CHECK(cudaMalloc(&wb, R * 2));
      CHECK(cudaMemcpy(wb, hwb.data(), R * 2, cudaMemcpyHostToDevice));
    }
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    auto variant = [&](const char *name, auto kernel, bool persistent) {
      int grid = persistent ? std::min(M, sms * 8) : M;
      run(name, [&] { kernel<<<grid, 256>>>(x, wb, y, M); });
    };
    variant("rms strata-like", rmsVariant<0>, false);
    variant("rms one barrier", rmsVariant<kOneBarrier>, false);
    variant("rms early weight", rmsVariant<kEarlyWeight>, false);
    variant("rms streaming", rmsVariant<kStreaming>, false);
    variant("rms one barrier+streaming", rmsVariant<kOneBarrier | kStreaming>,
            false);
    variant("rms one barrier+early+streaming",
            rmsVariant<kOneBarrier | kEarlyWeight | kStreaming>, false);
    variant("rms persistent", rmsVariant<kPersistent>, true);
    variant("rms persistent+one barrier+streaming",
            rmsVariant<kPersistent | kOneBarrier | kStreaming>, true);
    variant("rms persistent+all",
            rmsVariant<kPersistent | kOneBarrier | kStreaming | kEarlyWeight>,
            true);
    run("rms 2 rows per block",
        [&] { rmsRowsPerBlock<2><<<M / 2, 256>>>(x, wb, y); });
    run("rms 4 rows per block",
        [&] { rmsRowsPerBlock<4><<<M / 4, 256>>>(x, wb, y); });
    for (int perSm : {4, 6, 8}) {
      char name[64];
      std::snprintf(name, sizeof name, "rms persistent weight %d/SM", perSm);
      int grid = std::min(M, sms * perSm);
      run(name, [&] { rmsPersistentWeight<<<grid, 256>>>(x, wb, y, M); });
    }
    run("rms persistent weight 1024 blocks",
        [&] { rmsPersistentWeight<<<1024, 256>>>(x, wb, y, M); });
    variant("rms strata-like (again)", rmsVariant<0>, false);
    CHECK(cudaFree(wb));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(w));
  }

  // Softmax f32 8192 x {4096, 32768}.
  auto softmaxCase =
      [&](auto rTag,
          std::vector<std::pair<const char *,
                                std::function<void(const float *, float *)>>>
              variants) {
        constexpr int R = decltype(rTag)::value;
        const int M = 8192;
        std::vector<float> hx(size_t(M) * R);
        for (auto &v : hx)
          v = 2 * normal(rng);
        std::vector<double> ref(hx.size());
        for (int r = 0; r < M; ++r) {
          double m = -INFINITY, s = 0;
          for (int c = 0; c < R; ++c)
            m = std::max(m, double(hx[size_t(r) * R + c]));
          for (int c = 0; c < R; ++c)
            s += std::exp(hx[size_t(r) * R + c] - m);
          for (int c = 0; c < R; ++c)
            ref[size_t(r) * R + c] = std::exp(hx[size_t(r) * R + c] - m) / s;
        }
        float *x, *y;
        CHECK(cudaMalloc(&x, hx.size() * 4));
        CHECK(cudaMalloc(&y, hx.size() * 4));
        CHECK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
        std::vector<float> hy(hx.size());
        for (auto &[name, fn] : variants) {
          CHECK(cudaMemset(y, 0xff, hx.size() * 4));
          fn(x, y);
          CHECK(cudaGetLastError());
          CHECK(cudaDeviceSynchronize());
          CHECK(
              cudaMemcpy(hy.data(), y, hy.size() * 4, cudaMemcpyDeviceToHost));
          double num = 0, den = 0;
          for (size_t i = 0; i < hy.size(); ++i) {
            double d = hy[i] - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
          }
          double err = std::sqrt(num / den);
          if (!(err < 1e-4))
            std::printf("%s: WRONG (rel_err %g)\n", name, err);
          report(name, timeMs([&] { fn(x, y); }), 2.0 * M * R * 4, err);
        }
        CHECK(cudaFree(x));
        CHECK(cudaFree(y));
      };
  const int M = 8192;
  softmaxCase(std::integral_constant<int, 4096>{},
              {{"softmax4k shared T256",
                [&](const float *x, float *y) {
                  softmaxShared<4096, 256><<<M, 256, 16384>>>(x, y);
                }},
               {"softmax4k regs T128",
                [&](const float *x, float *y) {
                  softmaxRegs<4096, 128><<<M, 128>>>(x, y);
                }},
               {"softmax4k regs T256",
                [&](const float *x, float *y) {
                  softmaxRegs<4096, 256><<<M, 256>>>(x, y);
                }},
               {"softmax4k regs T512",
                [&](const float *x, float *y) {
                  softmaxRegs<4096, 512><<<M, 512>>>(x, y);
                }},
               {"softmax4k online T256", [&](const float *x, float *y) {
                  softmaxOnline<4096, 256><<<M, 256>>>(x, y);
                }}});
  auto clusterLaunch = [&](auto kernel, int blocks, int threads, int cluster,
                           const float *x, float *y) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, kernel, x, y));
  };
  CHECK(cudaFuncSetAttribute(softmaxShared<32768, 1024>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             131072));
  softmaxCase(
      std::integral_constant<int, 32768>{},
      {{"softmax32k shared T1024",
        [&](const float *x, float *y) {
          softmaxShared<32768, 1024><<<M, 1024, 131072>>>(x, y);
        }},
       {"softmax32k regs T1024",
        [&](const float *x, float *y) {
          softmaxRegs<32768, 1024><<<M, 1024>>>(x, y);
        }},
       {"softmax32k online T512",
        [&](const float *x, float *y) {
          softmaxOnline<32768, 512><<<M, 512>>>(x, y);
        }},
       {"softmax32k online T1024",
        [&](const float *x, float *y) {
          softmaxOnline<32768, 1024><<<M, 1024>>>(x, y);
        }},
       {"softmax32k cluster2 T512",
        [&](const float *x, float *y) {
          clusterLaunch(softmaxCluster<32768, 512, 2>, M * 2, 512, 2, x, y);
        }},
       {"softmax32k cluster4 T256",
        [&](const float *x, float *y) {
          clusterLaunch(softmaxCluster<32768, 256, 4>, M * 4, 256, 4, x, y);
        }},
       {"softmax32k cluster4 T512",
        [&](const float *x, float *y) {
          clusterLaunch(softmaxCluster<32768, 512, 4>, M * 4, 512, 4, x, y);
        }},
       {"softmax32k cluster8 T256", [&](const float *x, float *y) {
          clusterLaunch(softmaxCluster<32768, 256, 8>, M * 8, 256, 8, x, y);
        }}});
  return 0;
}
