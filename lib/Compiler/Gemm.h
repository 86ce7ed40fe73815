//===- Gemm.h - products whose epilogue the GEMM kernel fuses ---*- C++ -*-===//
//
// The graph layer's view of a matrix product with an elementwise epilogue,
// as the partitioner hands it to strata's own GEMM kernel on Hopper
// (GpuGemm.cpp, docs/gpu.md "GEMM with a fused epilogue"):
//
//   Y = f_n(... f_1(MatMul(A, W), ...) ...)   A [..., M, K], W [K, N]
//
// where each f_i is an elementwise op whose other operands are kernel
// inputs read once per column ([N], a bias), once per element (the
// product's shape, a residual) or once (one element). The partitioner takes
// it for a product that is generated code (no library call) when the GPU
// has wgmma (sm_90a): the product's result never goes through memory before
// its epilogue, and it runs on tensor cores instead of the generic
// mapping's one output per thread.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LIB_COMPILER_GEMM_H
#define STRATA_LIB_COMPILER_GEMM_H

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <functional>
#include <optional>
#include <string>

namespace strata {

/// The GEMM kernel's tile: 128 rows by 128 columns of the result per block,
/// 64 of K per step; columns and K must divide into them. Wide tiles are
/// 128x256 (GemmMatch::tileColumns).
constexpr int64_t kGemmTileRows = 128;
constexpr int64_t kGemmTileColumns = 128;
constexpr int64_t kGemmTileDepth = 64;
constexpr int64_t kGemmWideTileColumns = 256;

/// Rows need not divide into tiles: the last tile row's rows past M are
/// computed from zeros (A's TMA copies fill what lies outside A; the
/// portable form copies A's last row again) and never stored (the
/// result's TMA copies clip to its extent; the portable form checks). The
/// kernel takes such a product where those padding rows are at most
/// 1/kGemmMostPaddingRows of M: 197-token rows of a ViT at batch 32
/// (6,304 rows, 96 of padding) but not at batch 1 (197 rows, 59).
constexpr int64_t kGemmMostPaddingRows = 8;

/// The tile rows of a product of `rows` rows.
constexpr int64_t gemmTileRowCount(int64_t rows) {
  return (rows + kGemmTileRows - 1) / kGemmTileRows;
}

/// The least K at which a product whose epilogue has a costly tail (an op
/// other than adds, multiplies, ReLU and the like: BERT's exact GELU) takes
/// wide tiles. Both consumer warpgroups then work on one tile and apply
/// its epilogue together, so the tensor cores wait for it; with tiles of
/// 128 one consumer's epilogue runs under the other's products. On the
/// H200 (bench/RESULTS.md, 2026-12-01 08:10, p10 of replays, ms): with the
/// GELU, narrow against wide, K = 768 (16384x3072) 0.135 / 0.151, K = 1536
/// 0.239 / 0.241, K = 2048 (8192x4096) 0.202 / 0.203, K = 4096 0.388 /
/// 0.374; with a bias alone wide was as fast or faster at every K (K = 4096:
/// 0.376 / 0.352, cuBLASLt's 0.352). At this K, too, the GEMM kernel hands a
/// wide tile's epilogue after its cut to the producer warpgroup's idle
/// warps (GpuGemm.cpp, "handoff"), which is slower at shorter K.
constexpr int64_t kGemmWideCostlyDepth = 4096;

/// The least K at which the GEMM kernel takes a product from the library
/// when the library's call would leave part of the epilogue to a kernel
/// of its own (Partition.cpp): the shortest product measured where fusing
/// wins (BERT's FFN1, K = 768, on the H200: 0.165 ms against cuBLASLt's
/// 0.116 + the GELU kernel's 0.065; bench/RESULTS.md, 2026-12-01). With
/// fewer steps of K a tile's epilogue is less hidden behind the next
/// tile's products.
constexpr int64_t kGemmOverLibraryDepth = 768;

struct GemmMatch {
  /// The product first, then its epilogue in order.
  llvm::SmallVector<mlir::Operation *> ops;
  /// The product's rows (A's leading dimensions folded), columns and depth.
  int64_t rows = 0, columns = 0, depth = 0;
  /// The operands' and the result's type: "bf16" or "f16".
  std::string type;

  /// "bf16 16384x768x3072 with bias add and gelu" for reasons.
  std::string describe() const;
  /// The columns of the kernel's tiles: 256 (wide: both consumer
  /// warpgroups on each tile, 64 rows each) where they divide the result's
  /// columns, unless the epilogue has a costly op and K is less than
  /// kGemmWideCostlyDepth; else 128 (each consumer its own tiles). `why`
  /// says which and why.
  int64_t tileColumns(std::string *why = nullptr) const;
  /// The #strata.gemm of the kernel's declaration (strata.gemm): rows,
  /// columns, depth, type, tile_columns, and the arguments that hold A and
  /// W (`inputs` are the kernel's).
  kernel::GemmAttr toAttr(mlir::Builder &b,
                          llvm::ArrayRef<mlir::Value> inputs) const;
};

/// The GEMM kernel's match for the product `op`: a MatMul of bf16 or f16
/// with A [..., M, K] and W [K, N] (N a multiple of 128, K of 64, M at
/// least 128 with at most kGemmMostPaddingRows' share of padding) and the
/// longest elementwise chain after it that the kernel can fuse (each value
/// read only by the next op; no operand of the chain that `isCloned` says
/// the kernel would take in as a constant). `veto` says why an op may not
/// join ("" when it may: the decisions file's entries). nullopt, with
/// `whyNot` set, when `op` is not such a product.
std::optional<GemmMatch>
matchGemm(mlir::Operation *op,
          const std::function<bool(mlir::Operation *)> &isCloned,
          const std::function<std::string(llvm::ArrayRef<mlir::Operation *>,
                                          mlir::Operation *)> &veto,
          std::string &whyNot);

} // namespace strata

#endif // STRATA_LIB_COMPILER_GEMM_H
