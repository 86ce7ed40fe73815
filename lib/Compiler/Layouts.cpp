//===- Layouts.cpp - channels-last buffers between oneDNN steps -*- C++ -*-===//
//
// The module's activations are row-major ([N, C, H, W]), but oneDNN's fast
// convolutions (brgconv, brdgmm for depthwise) work channels-last, so each
// dnnl.conv step converted its input in and its output out: about 40% of a
// small MobileNet's time. A buffer that only oneDNN steps touch need not be
// row-major at all: this pass keeps it channels-last when
//
//   - a dnnl.conv, dnnl.pool or dnnl.concat step writes it (its first
//     output),
//   - every reader is a dnnl.conv step (as X or as the residual `sum`), a
//     dnnl.pool step (as X) or a dnnl.concat step (as any input), and
//   - it is not a result of the model, nor read through a view,
//
// and records the choice on both ends as step attributes (`dst_layout`,
// `src_layout`, `sum_layout`, `src_layout_<i>` = "channels_last", in
// strata.attrs) and, for
// people, in strata.layouts on the producer. The runtime's kernels then
// describe the buffer to oneDNN as channels-last (runtime/lib/kernels,
// activationDesc), which makes the conversions no-ops. The buffer has the
// same size either way, so the memory plan is unchanged.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
namespace kernel = strata::kernel;

namespace {

/// The library kernel a call runs ("dnnl.conv", ...), or "".
StringRef libraryOf(func::CallOp call, SymbolTable &symbols) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!callee)
    return "";
  auto library = kernel::get<kernel::Library>(callee);
  return library ? library.getValue() : "";
}

/// Whether the oneDNN step `library` may write its result channels-last.
bool writesChannelsLast(StringRef library) {
  return library == "dnnl.conv" || library == "dnnl.pool" ||
         library == "dnnl.concat";
}

/// The attribute naming how a oneDNN call reads `operand` ("src_layout",
/// "sum_layout", a concat's "src_layout_<i>"), or "" when it cannot read it
/// channels-last.
std::string readerAttr(func::CallOp call, SymbolTable &symbols,
                       unsigned operand) {
  StringRef library = libraryOf(call, symbols);
  if (library == "dnnl.pool")
    return operand == 0 ? "src_layout" : "";
  if (library == "dnnl.concat")
    return "src_layout_" + std::to_string(operand);
  if (library != "dnnl.conv")
    return "";
  if (operand == 0)
    return "src_layout";
  // The sum is the fourth input, or the third when it is not a rank-1 bias
  // (the runtime kernel tells them apart the same way).
  unsigned count = call.getNumOperands();
  bool isSum = (count == 4 && operand == 3) ||
               (count == 3 && operand == 2 &&
                cast<ShapedType>(call.getOperand(2).getType()).getRank() != 1);
  return isSum ? "sum_layout" : "";
}

void setLayoutAttr(func::CallOp call, SymbolTable &symbols, StringRef key) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  NamedAttrList attrs;
  if (auto existing = kernel::get<kernel::LibraryAttrs>(callee))
    attrs.append(existing.getValue());
  attrs.set(key, StringAttr::get(call.getContext(), "channels_last"));
  kernel::set<kernel::LibraryAttrs>(callee,
                                    attrs.getDictionary(call.getContext()));
}

struct ChannelsLastPass
    : PassWrapper<ChannelsLastPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ChannelsLastPass)
  StringRef getArgument() const final { return "strata-channels-last"; }
  StringRef getDescription() const final {
    return "Keep buffers channels-last between oneDNN conv/pool steps";
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp entry = strata::getEntryFunction(module);
    if (!entry)
      return;
    SymbolTable symbols(module);
    entry.walk([&](func::CallOp producer) {
      StringRef library = libraryOf(producer, symbols);
      if (!writesChannelsLast(library) || producer.getNumResults() != 1)
        return;
      Value buffer = producer.getResult(0);
      auto type = dyn_cast<RankedTensorType>(buffer.getType());
      if (!type || type.getRank() < 3 || buffer.use_empty())
        return;
      SmallVector<std::pair<func::CallOp, std::string>> readers;
      for (OpOperand &use : buffer.getUses()) {
        auto reader = dyn_cast<func::CallOp>(use.getOwner());
        std::string key =
            reader ? readerAttr(reader, symbols, use.getOperandNumber()) : "";
        if (key.empty())
          return; // a generated kernel, a view, the model's result, ...
        readers.push_back({reader, key});
      }
      setLayoutAttr(producer, symbols, "dst_layout");
      for (auto [reader, key] : readers)
        setLayoutAttr(reader, symbols, key);
      auto callee = symbols.lookup<func::FuncOp>(producer.getCallee());
      kernel::set<kernel::Layouts>(
          callee,
          StringAttr::get(module.getContext(),
                          "output channels-last: every reader is a oneDNN "
                          "conv, pool or concat step (no conversion between "
                          "them)"));
    });
  }
};

} // namespace

void strata::registerLayoutPasses() { PassRegistration<ChannelsLastPass>(); }
