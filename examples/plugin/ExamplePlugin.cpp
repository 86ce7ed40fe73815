//===- ExamplePlugin.cpp - a strata plugin to copy --------------*- C++ -*-===//
//
// A complete strata plugin (strata/Plugin/Plugin.h, docs/plugins.md) in three
// parts, each the pattern a plugin of your own follows:
//
//   1. A dialect, `example`, whose only job is to check the attribute the
//      pass below writes (a plugin brings its dialects through
//      Registrar::registerDialects).
//   2. A pass, `example-annotate-kernels`, that sets `example.op_count` on
//      every kernel function to the number of operations in its body, and
//      `example.linalg_ops` to how many of those are linalg ops (each one
//      loop nest once the cpu stage lowers it); with {remarks=true} it also
//      reports them as remarks. The effect of the other stage passes on each
//      kernel can then be read off the IR.
//   3. The entry point and the registration function, which registers the
//      pass and edits the stage pipelines as the user asks through this
//      plugin's own environment variable:
//
//        STRATA_EXAMPLE_PLUGIN=ACTION[=ARG],...     (unset: insert)
//
//        insert[=ANCHOR]         the pass after ANCHOR (kernel/cse)
//        insert-before[=ANCHOR]  the pass before ANCHOR
//                                (kernel/linalg-fuse-elementwise-ops)
//        disable[=ANCHOR]        drop ANCHOR
//                                (kernel/linalg-fuse-elementwise-ops)
//        replace[=ANCHOR]        ANCHOR (kernel/linalg-fuse-elementwise-ops)
//                                becomes linalg-generalize-named-ops followed
//                                by it: named ops such as linalg.matmul turn
//                                into linalg.generic before fusing
//        replace-stage           the kernel stage becomes this plugin's own
//                                version of it: the same lowering without
//                                elementwise fusion, then the pass
//        none                    only register the pass (strata-opt can run
//                                it by name)
//
//===----------------------------------------------------------------------===//

#include "strata/Plugin/Plugin.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// 1. The dialect
//===----------------------------------------------------------------------===//

/// A dialect written in C++ without ODS: it has no ops or types, and checks
/// the discardable attributes in its namespace (`example.*`) wherever they
/// appear once it is loaded. A real plugin would generate its dialect from
/// TableGen as strata's own graph dialect does.
class ExampleDialect : public Dialect {
public:
  // Classes private to a plugin get their TypeID explicitly: the implicit
  // fallback keys on the type's name, which two plugins could share.
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExampleDialect)

  explicit ExampleDialect(MLIRContext *context)
      : Dialect(getDialectNamespace(), context, TypeID::get<ExampleDialect>()) {
    // Lets test IR spell `"example.anything"() : () -> ()`, which shows that
    // the dialect is registered.
    allowUnknownOperations();
  }

  static constexpr llvm::StringLiteral getDialectNamespace() {
    return "example";
  }

  LogicalResult verifyOperationAttribute(Operation *op,
                                         NamedAttribute attr) override {
    StringRef name = attr.getName().getValue();
    if (name != "example.op_count" && name != "example.linalg_ops")
      return op->emitError("unknown attribute '")
             << name << "' of the example dialect";
    if (!isa<FunctionOpInterface>(op))
      return op->emitError("'") << name << "' belongs on a function";
    auto count = dyn_cast<IntegerAttr>(attr.getValue());
    if (!count || count.getValue().isNegative())
      return op->emitError("'") << name << "' must be a non-negative integer";
    return success();
  }
};

void registerExampleDialect(DialectRegistry &registry) {
  registry.insert<ExampleDialect>();
}

//===----------------------------------------------------------------------===//
// 2. The pass
//===----------------------------------------------------------------------===//

/// Is `func` one of the generated kernels? Before the kernel stage they are
/// the functions the partitioner outlined (`strata.kernel`); from the kernel
/// stage on, the functions with a body inside `module @kernels`.
bool isKernel(func::FuncOp func) {
  if (func.isDeclaration())
    return false;
  if (func->hasAttr("strata.kernel"))
    return true;
  auto module = func->getParentOfType<ModuleOp>();
  return module && module.getSymName() == "kernels";
}

struct AnnotateKernelsPass
    : public PassWrapper<AnnotateKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AnnotateKernelsPass)

  AnnotateKernelsPass() = default;
  // Pass options are copied when the pass manager clones the pass.
  AnnotateKernelsPass(const AnnotateKernelsPass &other) : PassWrapper(other) {}

  StringRef getArgument() const override { return "example-annotate-kernels"; }
  StringRef getDescription() const override {
    return "Set example.op_count and example.linalg_ops on each kernel: the "
           "operations and the linalg ops in its body (example plugin)";
  }

  // The pass writes `example.*` attributes; loading the dialect makes the
  // verifier check them after the pass.
  void getDependentDialects(DialectRegistry &registry) const override {
    registerExampleDialect(registry);
  }

  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](func::FuncOp func) {
      if (!isKernel(func))
        return;
      // The operations of the body itself (a linalg.generic counts once,
      // whatever its region holds), less the return.
      int64_t count = 0, linalgOps = 0;
      for (Block &block : func.getBody())
        for (Operation &op : block.without_terminator()) {
          ++count;
          linalgOps += isa<linalg::LinalgOp>(op) ? 1 : 0;
        }
      func->setAttr("example.op_count", builder.getI64IntegerAttr(count));
      func->setAttr("example.linalg_ops", builder.getI64IntegerAttr(linalgOps));
      if (remarks)
        func.emitRemark() << "kernel @" << func.getSymName() << ": " << count
                          << " operations, " << linalgOps << " linalg ops";
    });
  }

  Option<bool> remarks{*this, "remarks",
                       llvm::cl::desc("Report each kernel's count as a remark"),
                       llvm::cl::init(false)};
};

//===----------------------------------------------------------------------===//
// 3. Registration
//===----------------------------------------------------------------------===//

/// The kernel stage as this plugin would have it (replace-stage): strata's
/// passes in strata's order, without elementwise fusion, then the pass. A
/// replacement stage must leave the IR as the next stage expects it: here,
/// kernels in `module @kernels` as linalg on tensors.
constexpr const char *kKernelStage =
    "strata-outline-kernels,"
    "builtin.module(strata-convert-graph-to-linalg,canonicalize,cse,"
    "example-annotate-kernels)";

void registerExamplePlugin(strata::plugin::Registrar &registrar) {
  // Passes are registered with MLIR directly: strata and the plugin share
  // one libMLIR.so, so the pass is then known to every pipeline by name.
  PassRegistration<AnnotateKernelsPass>();
  registrar.registerDialects(registerExampleDialect);

  const char *setting = std::getenv("STRATA_EXAMPLE_PLUGIN");
  llvm::SmallVector<llvm::StringRef> actions;
  llvm::StringRef(setting ? setting : "insert")
      .split(actions, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef action : actions) {
    auto [name, argument] = action.trim().split('=');
    llvm::StringRef arg = argument; // a lambda captures variables, not bindings
    // The anchor strings are copied by the registrar, so a temporary is fine.
    auto anchor = [&](const char *fallback) {
      return (arg.empty() ? llvm::StringRef(fallback) : arg).str();
    };
    if (name == "insert") {
      registrar.insertAfter(anchor("kernel/cse").c_str(),
                            "example-annotate-kernels");
    } else if (name == "insert-before") {
      registrar.insertBefore(
          anchor("kernel/linalg-fuse-elementwise-ops").c_str(),
          "example-annotate-kernels");
    } else if (name == "disable") {
      registrar.disablePass(
          anchor("kernel/linalg-fuse-elementwise-ops").c_str());
    } else if (name == "replace") {
      registrar.replacePass(
          anchor("kernel/linalg-fuse-elementwise-ops").c_str(),
          "linalg-generalize-named-ops,linalg-fuse-elementwise-ops");
    } else if (name == "replace-stage" && arg.empty()) {
      registrar.replaceStage("kernel", kKernelStage);
    } else if (name != "none") {
      // Reported by strata, naming the plugin, and loading stops.
      std::string message =
          "STRATA_EXAMPLE_PLUGIN: unknown action '" + action.str() +
          "' (actions: insert[=ANCHOR], insert-before[=ANCHOR], "
          "disable[=ANCHOR], replace[=ANCHOR], replace-stage, none)";
      registrar.error(message.c_str());
      return;
    }
  }
}

} // namespace

/// The entry point strata looks up (extern "C", so that its name is not
/// mangled, and exported, as the library is built with hidden visibility).
extern "C" STRATA_PLUGIN_EXPORT const StrataPluginInfo *strataGetPluginInfo() {
  static const StrataPluginInfo info =
      STRATA_PLUGIN_INFO("example", "1.0.0", registerExamplePlugin);
  return &info;
}
