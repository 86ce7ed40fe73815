// RUN: strata-opt %s -split-input-file --strata-gpu-to-nvvm | FileCheck %s
//
// strata-gpu-to-nvvm (GpuLowering.cpp), in the cuda target's llvm stage on
// module @kernels after convert-scf-to-cf: gpu dialect ops become NVVM
// (thread and block ids, shuffles, barriers), float math functions calls
// of CUDA's libdevice (__nv_expf, ...; f16 through f32), arith's float min
// and max on scalars and 1-D vectors LLVM's intrinsics of the same
// semantics, an f32 exp2 marked afn one ex2.approx.ftz, and a body's
// strata.max_threads PTX's .maxntid (nvvm.maxntid). Everything else (memref,
// arith, integer math, min/max on vectors of rank 2) is left to the LLVM
// conversions that follow.

// A mapped kernel body as the gpu stage leaves it, cut down.
// CHECK-DAG: llvm.func @__nv_expf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_tanhf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_exp2f(f32) -> f32
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: attributes {nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK-NOT: gpu.
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[BID:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: %[[X:.*]] = memref.load %arg0
// CHECK: %[[E:.*]] = llvm.call @__nv_expf(%[[X]]) : (f32) -> f32
// CHECK: %[[T:.*]] = llvm.call @__nv_tanhf(%[[E]]) : (f32) -> f32
// CHECK: %[[MAX:.*]] = llvm.intr.maximum(%[[T]], %[[X]]) : (f32, f32) -> f32
// CHECK: %[[MAXNUM:.*]] = llvm.intr.maxnum(%[[MAX]], %[[X]]) : (f32, f32) -> f32
// CHECK: %[[S:.*]] = nvvm.shfl.sync bfly %{{.*}}, %[[MAXNUM]], %{{.*}}, %{{.*}} : f32 -> f32
// CHECK: %[[A:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[S]]) : (f32) -> f32
// CHECK: %[[P:.*]] = llvm.call @__nv_exp2f(%[[A]]) : (f32) -> f32
// CHECK: nvvm.barrier0
// CHECK: memref.store %[[P]], %arg1
// CHECK-NOT: gpu.
// CHECK-NOT: math.
// CHECK-NOT: strata.max_threads
func.func @kernel(%in: memref<256xf32>, %out: memref<256xf32>) attributes {strata.max_threads = 256 : i64} {
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %tid = gpu.thread_id x
  %bid = gpu.block_id x
  %x = memref.load %in[%tid] : memref<256xf32>
  %e = math.exp %x : f32
  %t = math.tanh %e : f32
  %m = arith.maximumf %t, %x : f32
  %n = arith.maxnumf %m, %x : f32
  %s, %valid = gpu.shuffle xor %n, %c1, %c32 : f32
  // exp2 with afn: one ex2.approx.ftz; without it: libdevice's exp2f.
  %a = math.exp2 %s fastmath<afn> : f32
  %p = math.exp2 %a : f32
  gpu.barrier
  memref.store %p, %out[%bid] : memref<256xf32>
  return
}

// -----

// An f16 square root through libdevice's f32 one; min on a 1-D vector as
// the intrinsic. Integer math and min on a 2-D vector stay for the
// generic conversions; a function without strata.max_threads gets no
// nvvm.maxntid.
// CHECK: llvm.func @__nv_sqrtf(f32) -> f32
// CHECK-LABEL: func.func @rest
// CHECK-NOT: nvvm.maxntid
// CHECK-SAME: {
// CHECK: %[[ABS:.*]] = math.absi %arg0 : i32
// CHECK: %[[MIN2D:.*]] = arith.minimumf %arg1, %arg2 : vector<2x2xf32>
// CHECK: %[[MIN1D:.*]] = llvm.intr.minimum(%arg3, %arg4) : (vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK: %[[EXT:.*]] = llvm.fpext %arg5 : f16 to f32
// CHECK: %[[SQ:.*]] = llvm.call @__nv_sqrtf(%[[EXT]]) : (f32) -> f32
// CHECK: %[[TR:.*]] = llvm.fptrunc %[[SQ]] : f32 to f16
// CHECK: return %[[ABS]], %[[MIN2D]], %[[MIN1D]], %[[TR]]
func.func @rest(%a: i32, %v: vector<2x2xf32>, %v2: vector<2x2xf32>, %w: vector<4xf32>, %w2: vector<4xf32>, %f: f16) -> (i32, vector<2x2xf32>, vector<4xf32>, f16) {
  %0 = math.absi %a : i32
  %1 = arith.minimumf %v, %v2 : vector<2x2xf32>
  %2 = arith.minimumf %w, %w2 : vector<4xf32>
  %3 = math.sqrt %f : f16
  return %0, %1, %2, %3 : i32, vector<2x2xf32>, vector<4xf32>, f16
}
