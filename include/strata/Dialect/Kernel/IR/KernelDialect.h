//===- KernelDialect.h - strata's kernel-layer dialect ----------*- C++ -*-===//
//
// The decisions recorded on kernels, as typed attributes (KernelBase.td).
// Passes read and write them through the helpers below, never by spelling
// an attribute's name:
//
//   if (auto kind = kernel::get<kernel::Kind>(decl)) ...
//   kernel::set<kernel::Launch>(decl, kernel::LaunchAttr::get(...));
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_DIALECT_KERNEL_IR_KERNELDIALECT_H
#define STRATA_DIALECT_KERNEL_IR_KERNELDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#define GET_ATTRDEF_CLASSES
#include "strata/Dialect/Kernel/IR/KernelAttrs.h.inc"

#include "strata/Dialect/Kernel/IR/KernelDialect.h.inc"

namespace strata::kernel {

// The discardable attributes, by the short names passes use.
using IsKernel = KernelDialect::KernelAttrHelper;
using Kind = KernelDialect::KindAttrHelper;
using Category = KernelDialect::CategoryAttrHelper;
using Reason = KernelDialect::ReasonAttrHelper;
using Nodes = KernelDialect::NodesAttrHelper;
using FusedBecause = KernelDialect::FusedBecauseAttrHelper;
using NotFused = KernelDialect::NotFusedAttrHelper;
using Tile = KernelDialect::TileAttrHelper;
using Library = KernelDialect::LibraryAttrHelper;
using LibraryAttrs = KernelDialect::AttrsAttrHelper;
using Accumulates = KernelDialect::AccumulatesAttrHelper;
using Template = KernelDialect::TemplateAttrHelper;
using Gemm = KernelDialect::GemmAttrHelper;
using Attention = KernelDialect::AttentionAttrHelper;
using ParallelRows = KernelDialect::ParallelRowsAttrHelper;
using ParallelBlock = KernelDialect::ParallelBlockAttrHelper;
using ParallelDims = KernelDialect::ParallelDimsAttrHelper;
using BlockStrides = KernelDialect::BlockStridesAttrHelper;
using Storage = KernelDialect::StorageAttrHelper;
using Layouts = KernelDialect::LayoutsAttrHelper;
using ChannelsLastArgs = KernelDialect::ChannelsLastArgsAttrHelper;
using ChannelsLastResults = KernelDialect::ChannelsLastResultsAttrHelper;
using ChannelsLastRows = KernelDialect::ChannelsLastRowsAttrHelper;
using AttentionPadding = KernelDialect::AttentionPaddingAttrHelper;
using Compile = KernelDialect::CompileAttrHelper;
using Precision = KernelDialect::PrecisionAttrHelper;
using Launch = KernelDialect::LaunchAttrHelper;
using GpuReason = KernelDialect::GpuReasonAttrHelper;
using GpuDistribute = KernelDialect::GpuDistributeAttrHelper;
using MaxThreads = KernelDialect::MaxThreadsAttrHelper;
using PtxKernel = KernelDialect::PtxKernelAttrHelper;
using PtxLaunch = KernelDialect::PtxLaunchAttrHelper;
using Windows = KernelDialect::WindowsAttrHelper;
using Host = KernelDialect::HostAttrHelper;
using RequiredValue = KernelDialect::RequiredValueAttrHelper;

/// The attribute `H` of `op`, or null when it is absent or not of its type.
template <typename H> auto get(mlir::Operation *op) {
  return H(op->getContext()).getAttr(op);
}
template <typename H> bool has(mlir::Operation *op) {
  return H(op->getContext()).isAttrPresent(op);
}
template <typename H, typename A> void set(mlir::Operation *op, A value) {
  H(op->getContext()).setAttr(op, value);
}
/// The attribute's full name, for messages (`strata.kind`).
template <typename H> constexpr llvm::StringLiteral name() {
  return H::getNameStr();
}

/// The string attribute `H` of `op`, or "" when it is absent.
template <typename H> llvm::StringRef text(mlir::Operation *op) {
  auto attr = get<H>(op);
  return attr ? attr.getValue() : llvm::StringRef();
}

/// The values of strata.kind.
inline constexpr llvm::StringLiteral kCodegen = "codegen";
inline constexpr llvm::StringLiteral kLibrary = "library";

/// Whether `op` is a kernel the compiler generates code for (as opposed
/// to a library call, or no kernel at all).
inline bool isCodegen(mlir::Operation *op) {
  return text<Kind>(op) == kCodegen;
}
inline bool isLibrary(mlir::Operation *op) {
  return text<Kind>(op) == kLibrary;
}

} // namespace strata::kernel

#endif // STRATA_DIALECT_KERNEL_IR_KERNELDIALECT_H
