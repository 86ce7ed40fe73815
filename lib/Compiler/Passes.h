//===- Passes.h - the compile stages' own passes ----------------*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_PASSES_H
#define STRATA_LIB_COMPILER_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata {

/// Input shapes as the strata-bind-input-shapes option: "x:3x8;y:".
std::string
encodeInputShapes(const std::map<std::string, std::vector<int64_t>> &shapes);
mlir::LogicalResult
decodeInputShapes(llvm::StringRef text,
                  std::map<std::string, std::vector<int64_t>> &shapes,
                  std::string &error);

/// Registers strata-bind-input-shapes, strata-verify-static-shapes,
/// strata-partition, strata-outline-kernels and strata-copy-to-linalg.
void registerCompilerPasses();
/// Registers strata-expand-gradients (Gradients.cpp).
void registerGradientPasses();
/// Registers strata-resolve-sequences (Sequences.cpp).
void registerSequencePasses();
/// Registers strata-conv-to-gemm (ConvToGemm.cpp).
void registerConvToGemmPass();
/// Registers strata-pad-attention (AttentionPadding.cpp).
void registerPadAttentionPass();
/// Registers strata-gather-slices (GatherSlices.cpp).
void registerGatherSlicesPass();
/// Registers strata-channels-last and strata-apply-layouts (Layouts.cpp).
void registerLayoutPasses();
/// Cuts the body of a kernel whose row split is over its channels-last rows
/// (strata.channels_last_rows) to one block of `block` rows, and returns the
/// bytes from one block to the next, per argument then per result (0 for
/// what every block reads whole) (Layouts.cpp).
llvm::SmallVector<int64_t> applyChannelsLastRows(mlir::func::FuncOp kernel,
                                                 int64_t block);
/// Registers strata-lower-precision (Precision.cpp).
void registerPrecisionPasses();

/// Whether the runtime's library kernel `library` ("dnnl.matmul",
/// "cublaslt.matmul", ...) reads and writes tensors of `elementType`
/// (Precision.cpp: which steps strata-lower-precision may retype).
bool libraryTakes(llvm::StringRef library, mlir::Type elementType);

} // namespace strata

#endif // STRATA_LIB_COMPILER_PASSES_H
