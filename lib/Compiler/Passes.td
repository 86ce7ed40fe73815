//===- Passes.td - the compile stages' own passes ----------*- tablegen -*-===//
//
// Every pass of lib/Compiler, by the stage that runs it (Pipeline.cpp builds
// the stage pipelines from their arguments, which plugins anchor on). The
// compile's options reach the passes as the module's #strata.compile
// (CompileOptionsAttr.cpp), which the dumped IR and MLIR's crash reproducer
// carry; a pass option named after one of its fields overrides it for that
// pass alone (by hand, in strata-opt), and is not set by the stages.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_PASSES_TD
#define STRATA_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// The graph stage's checks and rewrites before partitioning
//===----------------------------------------------------------------------===//

def CompileOptionsPass : Pass<"strata-compile-options", "mlir::ModuleOp"> {
  let summary = "Record the compile's options on the module (#strata.compile), "
                "which the stages' passes read";
  let description = [{
    Options given change the module's recorded ones (CompileOptions'
    defaults where none were recorded); the others stay. runStages records
    a compile's options itself; this pass is for strata-opt and the
    registered stage pipelines (strata-stage-<name>{target=cuda ...}).
  }];
  let dependentDialects = ["::strata::kernel::KernelDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "the target: cpu, cuda or rocm">,
    Option<"arch", "arch", "std::string", /*default=*/"\"native\"",
           "the processor (--cpu)">,
    Option<"libraries", "libraries", "bool", /*default=*/"true",
           "hand ops to vendor libraries">,
    Option<"hostKernels", "host-kernels", "bool", /*default=*/"false",
           "run every op that has a host kernel as one (--host-kernels)">,
    Option<"precision", "precision", "std::string", /*default=*/"",
           "storage between kernels: fp32, fp16 or bf16">,
    Option<"decisions", "decisions", "std::string", /*default=*/"",
           "a decisions file (JSON)">,
    Option<"shapes", "shapes", "std::string", /*default=*/"",
           "input shapes: name:d0xd1x...;name2:...">,
    Option<"values", "values", "std::string", /*default=*/"",
           "input values: name:v0,v1,...;name2:...">
  ];
}

def BindInputShapesPass
    : Pass<"strata-bind-input-shapes", "mlir::ModuleOp"> {
  let summary = "Give the entry function's inputs the bound shapes "
                "(name:d0xd1;...)";
  let options = [
    Option<"shapes", "shapes", "std::string", /*default=*/"",
           "name:d0xd1x...;name2:...">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "the target (for messages)">
  ];
}

def SpecializeInputValuesPass
    : Pass<"strata-specialize-input-values", "mlir::ModuleOp"> {
  let summary = "Substitute the given values of the inputs that shapes or "
                "trip counts depend on, then run the graph stage again";
  let description = [{
    After the graph stage, a value whose shape is still unknown, or control
    flow that stayed, may depend on the value of a small input (a Range's
    limit, a window's size, a Loop's trip count). Such inputs whose values
    are given become constants (the module then requires that value), and
    the graph pipeline and strata-resolve-sequences run again. Inputs
    nothing of the kind depends on stay run-time inputs.
  }];
  let options = [
    Option<"values", "values", "std::string", /*default=*/"",
           "name:v0,v1,...;name2:...">
  ];
}

def VerifyStaticShapesPass
    : Pass<"strata-verify-static-shapes", "mlir::ModuleOp"> {
  let summary = "Check that every value of the entry function has a static "
                "shape, or is sized at run time by a host step";
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "the target (for messages)">
  ];
}

def RunTimeShapesPass : Pass<"strata-run-time-shapes", "mlir::ModuleOp"> {
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "Mark every op that has a host kernel, not only those on run-time "
           "shapes (CompileOptions::hostKernels)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "the target: where generated code runs in the host's memory (not "
           "on a GPU), a host op of static results ends the host region">
  ];
  let summary = "Run the ops computed from value-dependent shapes on the "
                "host, and run-time If as guarded branches";
  let description = [{
    Turns each If whose condition is known only at run time, and whose
    branches yield different shapes, into graph.guard, the branches' ops and
    graph.merge; then marks every op that reads what a value-dependent op
    (NonZero, Compress, Unique, NonMaxSuppression) or a guard wrote,
    transitively, with the kernel layer's `host` attribute
    (RunTimeShapes.cpp). Where generated code runs in the host's memory
    (not on a GPU), the marking stops at host ops whose results have
    static shapes.
  }];
}

def ExpandGradientsPass : Pass<"strata-expand-gradients", "mlir::ModuleOp"> {
  let summary = "Rewrite ONNX Gradient ops into the graph ops that compute "
                "them";
}

def ResolveSequencesPass
    : Pass<"strata-resolve-sequences", "mlir::ModuleOp"> {
  let summary = "Rewrite sequences of compile-time length into tensor ops";
}

def LowerPrecisionPass : Pass<"strata-lower-precision", "mlir::ModuleOp"> {
  let summary = "Store f32 tensors between kernels in f16 or bf16, computing "
                "in f32 inside kernels";
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"",
           "the storage type between kernels: bf16 or f16">
  ];
}

//===----------------------------------------------------------------------===//
// GPU rewrites before partitioning (the cuda and rocm targets)
//===----------------------------------------------------------------------===//

def ConvToGemmPass : Pass<"strata-conv-to-gemm", "mlir::ModuleOp"> {
  let summary = "GPU: convolutions channels-last, as cuDNN's (cudnn=true), "
                "im2col + matrix product, or sums over their windows "
                "(depthwise and grouped)";
  let options = [
    Option<"cudnn", "cudnn", "bool", /*default=*/"false",
           "16-bit convolutions that read windows (group 1 or grouped, not "
           "depthwise) become graph.conv_channels_last, cuDNN's step (the "
           "cuda target sets it with libraries on)">
  ];
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

def CausalMasksPass : Pass<"strata-causal-masks", "mlir::ModuleOp"> {
  let summary = "GPU: an attention block's additive causal mask computed "
                "from constants as the causal Where, whose key steps the "
                "flash kernel skips";
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

def FoldHeadRepeatsPass : Pass<"strata-fold-head-repeats", "mlir::ModuleOp"> {
  let summary = "GPU: in attention the flash kernel does not take (a decode "
                "step), grouped-query attention's K/V repeat folded into the "
                "other operand's rows instead of copied";
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

def PadAttentionPass : Pass<"strata-pad-attention", "mlir::ModuleOp"> {
  let summary = "GPU: pad attention blocks whose sequence lengths or head "
                "dimension the flash kernel does not take to shapes it does";
  let dependentDialects = ["::strata::graph::GraphDialect",
                           "::strata::kernel::KernelDialect"];
}

def SplitReductionsPass : Pass<"strata-split-reductions", "mlir::ModuleOp"> {
  let summary = "GPU: a long sum, mean, max or min over axes before the "
                "last as a chain of reductions over chunks of rows, each "
                "spread over the grid";
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

def GatherSlicesPass : Pass<"strata-gather-slices", "mlir::ModuleOp"> {
  let summary = "GPU: a concat of slices of one tensor along its axis "
                "(torch.roll) as one gather, which spreads over the whole "
                "grid";
  let dependentDialects = ["::strata::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// Partitioning and layouts
//===----------------------------------------------------------------------===//

def PartitionPass : Pass<"strata-partition", "mlir::ModuleOp"> {
  let summary = "Group the entry function's ops into kernels (the graph "
                "layer's decisions) and outline each";
  // The kernels' decisions are the kernel dialect's attributes, which it
  // verifies once it is loaded.
  let dependentDialects = ["::strata::kernel::KernelDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "the target">,
    Option<"libraries", "libraries", "bool", /*default=*/"true",
           "hand ops to vendor libraries">,
    Option<"decisions", "decisions", "std::string", /*default=*/"",
           "a decisions file (JSON)">,
    Option<"arch", "arch", "std::string", /*default=*/"",
           "the processor (--cpu): on the cuda target native (the "
           "H100/H200: an sm_90a cubin and sm_90 PTX, also when not given) "
           "or an NVPTX name such as sm_90a">
  ];
}

def ChannelsLastPass : Pass<"strata-channels-last", "mlir::ModuleOp"> {
  let summary = "Keep buffers channels-last around oneDNN conv/pool/concat "
                "steps, through the generated kernels between them";
}

//===----------------------------------------------------------------------===//
// Kernel code generation
//===----------------------------------------------------------------------===//

def OutlineKernelsPass : Pass<"strata-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Move the generated kernels' bodies into module @kernels";
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ApplyLayoutsPass : Pass<"strata-apply-layouts", "mlir::ModuleOp"> {
  let summary = "Make generated kernels read and write their channels-last "
                "operands and results so (strata.channels_last_args/results)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CollapseDimsPass : Pass<"strata-collapse-dims", "mlir::ModuleOp"> {
  let summary = "Merge consecutive loops that every operand reads "
                "contiguously (long innermost loops for LLVM's vectorizer)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CopyToLinalgPass : Pass<"strata-copy-to-linalg", "mlir::ModuleOp"> {
  let summary = "Rewrite memref.copy as linalg.copy (no runtime library "
                "call)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def VectorizeInnerLoopsPass
    : Pass<"strata-vectorize-inner-loops", "mlir::ModuleOp"> {
  let summary = "Mark innermost loops that store contiguously so that LLVM "
                "vectorizes them instead of unrolling them whole (CPU "
                "kernels)";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ResultsInPlacePass : Pass<"strata-results-in-place", "mlir::ModuleOp"> {
  let summary = "A kernel result computed into a temporary and copied out "
                "through a view is computed into the out-parameter (CPU "
                "kernels)";
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ApproximateMathPass : Pass<"strata-approximate-math", "mlir::ModuleOp"> {
  let summary = "Expand exp, expm1, log, log1p, log2, tanh, erf and erfc into "
                "vectorizable polynomials (CPU kernels)";
  // MLIR's approximations of vector math build vector ops.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def FloatMinMaxToLlvmPass
    : Pass<"strata-float-min-max-to-llvm", "mlir::ModuleOp"> {
  let summary = "arith's float min and max as LLVM's intrinsics of the same "
                "semantics, before arith-expand (CPU kernels)";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def NumberConstantsPass : Pass<"strata-number-constants", "mlir::ModuleOp"> {
  let summary = "Order and name bufferization's constant globals by their "
                "first use (reproducible modules)";
}

//===----------------------------------------------------------------------===//
// GPU kernels
//===----------------------------------------------------------------------===//

def GpuWindowIndicesPass : Pass<"strata-gpu-window-indices", "mlir::ModuleOp"> {
  let summary = "GPU: a convolution's or pooling's window index and padding "
                "mask computed in the kernel from its loops, not loaded";
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def GpuPullFusionPass : Pass<"strata-gpu-pull-fusion", "mlir::ModuleOp"> {
  let summary = "Rewrite each generated pointwise kernel of several ops "
                "(slices, concats, pads, transposes, elementwise ops) into "
                "one all-parallel linalg.generic that reads through them";
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def GpuMapPass : Pass<"strata-gpu-map", "mlir::ModuleOp"> {
  let summary = "Map each bufferized kernel onto a grid of thread blocks "
                "(records strata.gpu_* on its declaration)";
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::strata::kernel::KernelDialect"
  ];
  let options = [
    Option<"dynamicSharedLimit", "dynamic-shared-limit", "int64_t",
           /*default=*/"strata::gpuDynamicSharedLimit(\"sm_90\")",
           "Most bytes of dynamic shared memory a block may use (0: static "
           "shared memory only); the default suits sm_90, see "
           "strata::gpuDynamicSharedLimit">,
    Option<"blockSharedLimit", "block-shared-limit", "int64_t",
           /*default=*/"strata::gpuBlockSharedLimit(\"sm_90\")",
           "Most bytes of shared memory a block may opt in to, for kernels "
           "without static shared memory (the GEMM kernel); the default "
           "suits sm_90, see strata::gpuBlockSharedLimit">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "Generate Hopper's warpgroup products (wgmma; sm_90a only) in the "
           "kernels that have tensor-core forms">,
    Option<"gridDependency", "grid-dependency", "bool", /*default=*/"false",
           "Begin every kernel by waiting for the grids before it "
           "(griddepcontrol.wait; sm_90 on), then letting the next kernel's "
           "blocks start, so that the runtime may launch it with "
           "programmatic dependent launch (waits_for_grids in its "
           "strata.launch)">,
    Option<"packRows", "pack-rows", "int64_t", /*default=*/"0",
           "Row blocks per CUDA block for short rows kept in registers, one "
           "warp each (1 keeps a block per row block; a knob for "
           "measuring); 0: the mapping's choice">,
    Option<"pointRows", "point-rows", "int64_t", /*default=*/"1",
           "Most rows of lanes a thread of a point reduction computes, at "
           "consecutive indices of a loop that an input read in its loop "
           "does not depend on (a knob for measuring; 1: none, the "
           "default, see docs/gpu.md)">
  ];
}

def GpuToNvvmPass : Pass<"strata-gpu-to-nvvm", "mlir::ModuleOp"> {
  let summary = "Lower gpu dialect ops to NVVM and math functions to "
                "libdevice calls (the rest is left to the LLVM conversions)";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // STRATA_COMPILER_PASSES_TD
