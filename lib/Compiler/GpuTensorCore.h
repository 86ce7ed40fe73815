//===- GpuTensorCore.h - building blocks of tensor-core kernels -*- C++ -*-===//
//
// What strata's hand-structured GPU kernels (the flash-attention kernel,
// GpuAttention.cpp, and the GEMM with a fused epilogue, GpuGemm.cpp) build
// their bodies from: integer arithmetic on i32 thread indices, byte
// addresses, cp.async copies into 128-byte swizzled shared tiles, TMA copies
// and mbarriers, wgmma's descriptors and products (inline PTX), mma.sync
// and ldmatrix.
//
// Shared tiles are column halves of 64 16-bit elements, each its rows of
// 128 bytes, with 16-byte chunk c of row r at c xor (r mod 8): wgmma's
// 128-byte swizzle (tiles start at 1024-byte boundaries), under which the 8
// rows an ldmatrix reads at one column also fall in 8 distinct bank groups.
// A TMA copy with the tensor map's 128-byte swizzle lands in this layout.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_COMPILER_GPUTENSORCORE_H
#define STRATA_LIB_COMPILER_GPUTENSORCORE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace strata {

/// wgmma reads swizzled tiles from 1024-byte boundaries: kernels round
/// their dynamic shared memory's start up to one.
constexpr int64_t kWgmmaAlign = 1024;

/// A loop from `lower` to `upper` (i32 values) by `step`, whose body gets
/// the i32 induction variable and the state and returns the next state;
/// returns the final state.
mlir::ValueRange
forLoop(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lower,
        mlir::Value upper, int64_t step, mlir::ValueRange init,
        llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                          mlir::ValueRange)>
            bodyBuilder);

/// `then` under `condition` (i1), with no results.
void ifThen(mlir::OpBuilder &b, mlir::Location loc, mlir::Value condition,
            llvm::function_ref<void()> then);

class TensorCoreEmitter {
protected:
  /// Emits the body of the kernel declared by `decl` into `body` (in
  /// module @kernels); `wgmma`: Hopper's warpgroup products (sm_90a), else
  /// mma.sync.
  TensorCoreEmitter(mlir::func::FuncOp decl, mlir::func::FuncOp body,
                    mlir::ModuleOp kernels, bool wgmma)
      : decl(decl), body(body), kernels(kernels), wgmma(wgmma),
        b(body.getContext()), loc(body.getLoc()) {}

  /// Checks that the body has a buffer per input and one for the result,
  /// and that each of `args` names an input; else an internal error naming
  /// `what` ("the GEMM kernel").
  mlir::LogicalResult checkBuffers(llvm::StringRef what,
                                   llvm::ArrayRef<int64_t> args);

  // Types and constants.
  mlir::Type i32() { return b.getI32Type(); }
  mlir::Type f32() { return b.getF32Type(); }
  mlir::Value c32(int64_t v) {
    return mlir::arith::ConstantIntOp::create(b, loc, i32(), v);
  }
  mlir::Value c64(int64_t v) {
    return mlir::arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  mlir::Value cf(double v);
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value shr(mlir::Value x, int64_t n) {
    return mlir::arith::ShRUIOp::create(b, loc, x, c32(n));
  }
  mlir::Value shl(mlir::Value x, int64_t n) {
    return mlir::arith::ShLIOp::create(b, loc, x, c32(n));
  }
  mlir::Value band(mlir::Value x, int64_t m) {
    return mlir::arith::AndIOp::create(b, loc, x, c32(m));
  }
  mlir::Value bxor(mlir::Value x, mlir::Value y) {
    return mlir::arith::XOrIOp::create(b, loc, x, y);
  }
  mlir::Value wide(mlir::Value x) {
    return mlir::arith::ExtUIOp::create(b, loc, b.getI64Type(), x);
  }
  /// The thread's index in its block (i32).
  mlir::Value threadIndex();
  mlir::Value blockIndex();
  /// The warpgroup of thread `tid` (tid / 128), shuffled from lane 0 so
  /// that ptxas knows it is uniform in each warp: branches on it (the
  /// roles of a warp-specialized kernel) are then uniform too, else ptxas
  /// serializes the wgmma products in them.
  mlir::Value uniformWarpgroup(mlir::Value tid);

  /// A byte address `offset` past `base` (an LLVM pointer).
  mlir::Value at(mlir::Value base, mlir::Value offset) {
    return mlir::LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(),
                                     base, mlir::ValueRange{offset});
  }
  /// The byte offset of 16-byte chunk `chunk` of row `row` in a swizzled
  /// tile of `tileRows` rows whose rows hold `chunksPerRow` chunks: chunks
  /// 0-7 in the first column half, 8-15 in the second (`tileRows` rows of
  /// 128 bytes further on).
  mlir::Value swizzled(mlir::Value row, mlir::Value chunk, int64_t tileRows,
                       int64_t chunksPerRow);
  /// Issues the cp.async copies of a [count, chunksPerRow * 8] tile of
  /// 16-bit elements whose first row is at global `src`, rows `rowBytes`
  /// apart, into the swizzled shared tile at `tile`; `threads` threads
  /// (thread index `tid`) share the copies, the first ones taking one more
  /// where the chunks are no multiple of `threads`. With `lastRow` (i32),
  /// rows past it copy row `lastRow` again (a tile partly past its
  /// matrix's rows).
  void loadTile(mlir::Value tid, int64_t threads, mlir::Value src,
                mlir::Value tile, int64_t count, int64_t chunksPerRow,
                int64_t rowBytes, mlir::Value lastRow = {});

  /// An inline PTX statement with side effects (LLVM's $N operands).
  mlir::LLVM::InlineAsmOp inlineAsm(mlir::Type result,
                                    mlir::ValueRange operands,
                                    llvm::StringRef text,
                                    llvm::StringRef constraints);
  /// An instruction of wgmma's protocol with no operands (fence,
  /// commit_group, wait_group, fence.proxy.async); it orders memory.
  void asmBarrier(llvm::StringRef text);
  /// bar.sync on hardware barrier `id` (i32) for `threads` threads.
  void namedBarrier(mlir::Value id, int64_t threads);
  /// `values` through an empty asm statement: what computes them cannot
  /// move below it, nor what reads the results above it (CUTLASS's
  /// warpgroup_fence_operand). Keeps accumulator arithmetic out of the
  /// span between wgmma.fence and wgmma.wait_group.
  llvm::SmallVector<mlir::Value> fenceOperands(llvm::ArrayRef<mlir::Value>);
  /// wgmma's descriptor of a swizzled tile (128-byte swizzle) at `tile`:
  /// `leading` bytes between the 64-element column halves of an MN-major
  /// operand, `stride` bytes between groups of 8 rows.
  mlir::Value descriptor(mlir::Value tile, int64_t leading, int64_t stride);
  /// A descriptor `bytes` further on.
  mlir::Value advance(mlir::Value desc, int64_t bytes);
  /// D = A B + D (or A B when !accumulate) for one m64nNk16 step of the
  /// warpgroup: A from shared memory (a descriptor) or from registers (four
  /// words per thread, the layout of mma.sync's A fragments per warp), B
  /// from shared memory, MN-major when `transposeB`. `acc` holds the
  /// thread's N/2 accumulators, in mma.sync's C-fragment order per 8
  /// columns.
  llvm::SmallVector<mlir::Value> wgmmaStep(llvm::ArrayRef<mlir::Value> acc,
                                           mlir::Value aDescriptor,
                                           llvm::ArrayRef<mlir::Value> aWords,
                                           mlir::Value bDescriptor,
                                           bool transposeB, bool accumulate);
  // Hopper's asynchronous copies (sm_90): mbarriers in shared memory (their
  // 32-bit shared addresses) and the tensor memory accelerator (TMA), whose
  // copies are described by tensor maps the runtime encodes
  // (cuTensorMapEncodeTiled) and passes in global memory (docs/runtime.md,
  // "Tensor maps").

  /// The 32-bit shared-memory address of `pointer` (addrspace 3).
  mlir::Value sharedAddress(mlir::Value pointer);
  /// mbarrier.init with `count` arrivals per phase.
  void mbarrierInit(mlir::Value barrier, int64_t count);
  /// Waits until the phase of parity `parity` (0 or 1, i32) has completed.
  void mbarrierWait(mlir::Value barrier, mlir::Value parity);
  /// Arrives (one arrival), when `predicate` (i32) is nonzero or null.
  void mbarrierArrive(mlir::Value barrier, mlir::Value predicate = {});
  /// Arrives and expects `bytes` of asynchronous copies in this phase.
  void mbarrierArriveExpect(mlir::Value barrier, int64_t bytes);
  /// A TMA copy of the box at coordinates (x: innermost, y) of the tensor
  /// map at global address `map` (i64) into shared address `to`; its bytes
  /// complete on `barrier`.
  void tmaLoad2d(mlir::Value to, mlir::Value map, mlir::Value x, mlir::Value y,
                 mlir::Value barrier);
  /// A TMA copy of shared address `from` into the box at coordinates
  /// (x: innermost, y) of the tensor map at global address `map` (i64), in
  /// this thread's current bulk group. The thread commits the group and
  /// waits for it (bulkCommit, bulkWaitRead, bulkWait); the writes to
  /// `from` before it need fence.proxy.async (asmBarrier).
  void tmaStore2d(mlir::Value map, mlir::Value x, mlir::Value y,
                  mlir::Value from);

  /// ldmatrix.x4 of the four 8x8 matrices whose rows this lane addresses.
  llvm::SmallVector<mlir::Value> ldmatrix(mlir::Value address, bool transpose);
  /// d = a b + c on one m16n8k16 tile.
  llvm::SmallVector<mlir::Value> mma(llvm::ArrayRef<mlir::Value> a,
                                     llvm::ArrayRef<mlir::Value> bFrag,
                                     llvm::ArrayRef<mlir::Value> c);
  /// The products' 16-bit type: f16 or bf16.
  mlir::Type halfType() {
    return f16 ? mlir::Type(b.getF16Type()) : mlir::Type(b.getBF16Type());
  }
  /// Two values of halfType() as one 32-bit word (lo in the low half).
  mlir::Value packPair(mlir::Value lo, mlir::Value hi);
  /// Two f32 values rounded to halfType(), as one word (packPair).
  mlir::Value pack(mlir::Value lo, mlir::Value hi);
  mlir::Value shuffleXor(mlir::Value v, int32_t mask) {
    return mlir::gpu::ShuffleOp::create(b, loc, v, mask, 32,
                                        mlir::gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }

  /// Replaces the body's contents (and the globals only they read) with an
  /// empty entry block whose buffers are untyped byte buffers (the
  /// executor's bare pointers); returns a global pointer per buffer, in
  /// order, built at the block's start. `threads` becomes nvvm.maxntid.
  llvm::SmallVector<mlir::Value> resetBody(int64_t threads);
  /// The start of the kernel's dynamic shared memory (the module's
  /// external shared array `name`), rounded up to kWgmmaAlign when `align`.
  mlir::Value sharedMemory(llvm::StringRef name, bool align);

  mlir::func::FuncOp decl, body;
  mlir::ModuleOp kernels;
  /// Hopper's warpgroup products (sm_90a) rather than mma.sync.
  bool wgmma;
  mlir::OpBuilder b;
  mlir::Location loc;
  /// The 16-bit type of the products' operands: f16, else bf16.
  bool f16 = false;
};

} // namespace strata

#endif // STRATA_LIB_COMPILER_GPUTENSORCORE_H
