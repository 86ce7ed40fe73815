//===- KernelBase.td - strata's kernel-layer dialect -----*- tablegen -*-===//
//
// The kernel layer's decisions, as typed attributes of the `strata`
// dialect. The partitioner turns the graph into kernels (functions called
// from the entry function) and records on each kernel's declaration what it
// decided: library call or generated code, the nodes it holds and why they
// were fused, the row split and the tile. The target stages add how the
// kernel is launched. The module writer and `strata explain` read the same
// attributes.
//
// Every attribute is declared here with its type, so that no pass spells
// an attribute's name as a string, and the dialect verifies each of them
// (KernelDialect.cpp, verifyOperationAttribute) whenever the IR is
// verified: after every pass, and when a stage's IR is read back.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_KERNEL_BASE_TD
#define STRATA_KERNEL_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kernel_Dialect : Dialect {
  let name = "strata";
  let cppNamespace = "::strata::kernel";
  let summary = "strata's kernel layer: the decisions recorded on kernels";
  let description = [{
    No ops: discardable attributes on `func.func` declarations (the kernels
    of the entry module), on the module, and on the loops of a generated
    kernel's body, plus the attribute types they hold.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;

  // What each kernel declaration carries (docs/compiler.md). Kinds are
  // "codegen" or "library"; a library kernel names its library function.
  let discardableAttrs = (ins
    // Partition: every kernel.
    "::mlir::UnitAttr":$kernel,
    "::mlir::StringAttr":$kind,
    "::mlir::StringAttr":$category,
    "::mlir::StringAttr":$reason,
    "::mlir::ArrayAttr":$nodes,
    "::mlir::ArrayAttr":$fused_because,
    "::mlir::ArrayAttr":$not_fused,
    "::mlir::DictionaryAttr":$tile,
    // Partition: library kernels.
    "::mlir::StringAttr":$library,
    "::mlir::DictionaryAttr":$attrs,
    // A library kernel that adds its result onto one of its inputs (oneDNN's
    // sum post-op): that argument's position. The result may take the
    // argument's buffer when nothing reads the argument later (the module
    // writer's arena plan); else the kernel copies it into the result first.
    "::mlir::IntegerAttr":$accumulates,
    // Partition: kernels generated from a template and their parameters.
    "::mlir::StringAttr":$template,
    "::strata::kernel::GemmAttr":$gemm,
    "::strata::kernel::AttentionAttr":$attention,
    // The row split (RowParallel.h) and the pointer strides per row block.
    "::mlir::IntegerAttr":$parallel_rows,
    "::mlir::IntegerAttr":$parallel_block,
    "::mlir::IntegerAttr":$parallel_dims,
    "::mlir::DenseI64ArrayAttr":$block_strides,
    // Precision and layouts: what the stage changed, in words.
    "::mlir::StringAttr":$storage,
    "::mlir::StringAttr":$layouts,
    // A generated kernel's operands and results (by position) whose
    // buffers are channels-last: the cpu stage reads and writes them so.
    "::mlir::DenseI64ArrayAttr":$channels_last_args,
    "::mlir::DenseI64ArrayAttr":$channels_last_results,
    // The row split (parallel_rows, parallel_block) is over the rows of the
    // kernel's channels-last buffers, [N, first spatial dimension], rather
    // than over leading dimensions (Layouts.cpp).
    "::mlir::UnitAttr":$channels_last_rows,
    // On an attention block's first product (graph.matmul), before the
    // partitioner: what strata-pad-attention padded, or why it did not.
    "::mlir::StringAttr":$attention_padding,
    // On a graph.constant strata-conv-to-gemm made: the windows whose
    // index, padding mask or padding condition it holds (kind, input,
    // output, kernel, strides, dilations, pads), which strata-gpu-window-
    // indices computes in the kernel instead of loading.
    "::mlir::DictionaryAttr":$windows,
    // On a graph op, from strata-run-time-shapes to the partitioner: it
    // reads what a value-dependent op or a run-time If's guard wrote, and
    // runs as a host kernel (RunTimeShapes.cpp).
    "::mlir::UnitAttr":$host,
    // On an argument of the model's entry function (an argument attribute:
    // the name only, kernel::name<RequiredValue>()): the value the module
    // was specialized on (Specialize.cpp), which a session must be given.
    "::mlir::ElementsAttr":$required_value,
    // On the module: the compile's options, which the stages' passes read
    // (docs/kernel-layer.md); and the precision strata-lower-precision
    // applied.
    "::strata::kernel::CompileAttr":$compile,
    "::mlir::StringAttr":$precision,
    // The GPU stage: the launch, the choice in words, and on the loops of
    // a kernel's body, how each loop was spread over the threads.
    "::strata::kernel::LaunchAttr":$launch,
    "::mlir::StringAttr":$gpu_reason,
    "::mlir::StringAttr":$gpu_distribute,
    // On a generated kernel's body: the most threads a block launches it
    // with, which each target's lowering turns into its own attribute
    // (nvvm.maxntid, rocdl.flat_work_group_size).
    "::mlir::IntegerAttr":$max_threads,
    // The portable PTX's own kernel and launch, where they differ from the
    // cubin's (Compiler.cpp, recordPortableLaunches).
    "::mlir::StringAttr":$ptx_kernel,
    "::strata::kernel::LaunchAttr":$ptx_launch
  );
}

class Kernel_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Kernel_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Kernel_LaunchAttr : Kernel_Attr<"Launch", "launch"> {
  let summary = "how a GPU kernel is launched";
  let description = [{
    The launch the GPU stage chose for a kernel, and what the runtime needs
    to launch it:

    ```
    #strata.launch<block_ops, grid = [64, 1, 1], block = [256, 1, 1],
                   shared = 0, static_shared = 4096>
    ```

    - `mapping`: how the body covers its outputs (`elementwise`,
      `block_ops`, `block_serial`, `gemm`, `flash_attention`, `copy`);
    - `grid`, `block`: blocks and threads per block, three extents each;
    - `shared`: dynamic shared memory per block, in bytes;
    - `static_shared`: the static shared memory the body declares;
    - `scratch`: bytes of a global scratch buffer per kernel;
    - `vector`: elements per thread access (elementwise);
    - `persistent`: blocks per SM of a kernel that walks its tiles with a
      stride of its grid (0: not persistent);
    - `tensor_maps`: the TMA tensor maps the runtime encodes, 7 numbers
      each: the operand, its inner and outer extents, the outer stride in
      bytes, the box's two extents, the swizzle (docs/runtime.md);
    - `waits_for_grids`: the body waits for the grids before it at its
      entry, so that it may be launched with programmatic dependent launch.
  }];
  let parameters = (ins
    StringRefParameter<"how the body covers its outputs">:$mapping,
    ArrayRefParameter<"int64_t", "blocks">:$grid,
    ArrayRefParameter<"int64_t", "threads per block">:$block,
    DefaultValuedParameter<"int64_t", "0">:$shared,
    DefaultValuedParameter<"int64_t", "0">:$static_shared,
    DefaultValuedParameter<"int64_t", "0">:$scratch,
    DefaultValuedParameter<"int64_t", "0">:$vector,
    DefaultValuedParameter<"int64_t", "0">:$persistent,
    OptionalArrayRefParameter<"int64_t">:$tensor_maps,
    DefaultValuedParameter<"bool", "false">:$waits_for_grids
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// This launch with `waits_for_grids` set.
    LaunchAttr withWaitForGrids() const;
    /// Threads per block, all three extents together.
    int64_t threadsPerBlock() const;
  }];
}

// Parameters the declarative format cannot spell as the kernel layer wants
// them: a list in brackets (possibly empty), an f64 that prints back
// exactly, and a flag written as true or false. Their parsers and printers
// are in KernelDialect.cpp.
class Kernel_I64List<string desc> : ArrayRefParameter<"int64_t", desc> {
  let parser = "::strata::kernel::parseI64List($_parser)";
  let printer = "::strata::kernel::printI64List($_printer, $_self)";
}
class Kernel_F64<string desc> : APFloatParameter<desc> {
  let parser = "::strata::kernel::parseF64($_parser)";
  let printer = "$_printer.printFloat($_self)";
}
class Kernel_Flag<string desc, string value = "false">
    : DefaultValuedParameter<"bool", value, desc> {
  let parser = "::strata::kernel::parseFlag($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

def Kernel_GemmAttr : Kernel_Attr<"Gemm", "gemm"> {
  let summary = "the GEMM kernel's product";
  let description = [{
    What the partitioner matched for the GEMM kernel (Gemm.h) and the GPU
    stage's emitter reads:

    ```
    #strata.gemm<rows = 256, columns = 128, depth = 192, type = bf16,
                 tile_columns = 128, a = 0, w = 1>
    ```

    - `rows`, `columns`, `depth`: the product's M (A's leading dimensions
      folded), N and K;
    - `type`: the operands' and the result's element type (bf16 or f16);
    - `tile_columns`: the columns of the kernel's tiles, which divide N;
    - `a`, `w`: the kernel's arguments that hold A [M, K] and W [K, N].
  }];
  let parameters = (ins
    "int64_t":$rows,
    "int64_t":$columns,
    "int64_t":$depth,
    "::mlir::Type":$type,
    "int64_t":$tile_columns,
    "int64_t":$a,
    "int64_t":$w
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kernel_AttentionOperandAttr
    : Kernel_Attr<"AttentionOperand", "attention_operand"> {
  let summary = "how the attention kernel reads or writes one operand";
  let description = [{
    One of Q, K, V (read from a kernel argument, `arg`) or the result O
    (`arg` absent): the element offset of its first row, its stride per
    batch dimension and per row, in elements. Inside `#strata.attention`
    it prints without its name: `q = <arg = 0, offset = 0, ...>`.
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "-1", "the kernel argument">:$arg,
    "int64_t":$offset,
    Kernel_I64List<"stride per batch dimension">:$batch_strides,
    "int64_t":$row_stride
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kernel_AttentionBiasAttr : Kernel_Attr<"AttentionBias", "attention_bias"> {
  let summary = "the additive bias the attention kernel reads per score";
  let description = [{
    A buffer broadcast to [batch..., S, T] (a padding mask, a learned
    bias), read through strides that are 0 along its broadcast dimensions
    and multiplied by `factor`. `type` is f32, bf16 or f16.
  }];
  let parameters = (ins
    "int64_t":$arg,
    Kernel_I64List<"stride per batch dimension">:$batch_strides,
    "int64_t":$row_stride,
    "int64_t":$key_stride,
    Kernel_F64<"what the bias is multiplied by (f64)">:$factor,
    "::mlir::Type":$type
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kernel_AttentionAttr : Kernel_Attr<"Attention", "attention"> {
  let summary = "the flash-attention kernel's block";
  let description = [{
    What the partitioner matched for the flash-attention kernel
    (Attention.h) and the GPU stage's emitter reads: the operands Q, K, V
    and the result O (each a `#strata.attention_operand`), Q's batch
    dimensions (their product is `batch`), the sequence lengths, the head
    dimension, the query rows of a block, the scale of the scores, the
    element type (bf16 or f16), and optionally the causal mask's offset
    (keys j <= i + causal_offset are kept), the bias, and whether rows
    whose every key is masked give 0 rather than NaN.
  }];
  let parameters = (ins
    "AttentionOperandAttr":$q,
    "AttentionOperandAttr":$k,
    "AttentionOperandAttr":$v,
    "AttentionOperandAttr":$o,
    Kernel_I64List<"Q's batch dimensions">:$batch_dims,
    "int64_t":$batch,
    "int64_t":$seq_q,
    "int64_t":$seq_k,
    "int64_t":$head_dim,
    "int64_t":$query_rows,
    Kernel_F64<"the scores' scale (f64)">:$scale,
    "::mlir::Type":$type,
    OptionalParameter<"std::optional<int64_t>">:$causal_offset,
    OptionalParameter<"AttentionBiasAttr">:$bias,
    Kernel_Flag<"fully masked rows give 0">:$zero_masked_rows
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Kernel_CompileAttr : Kernel_Attr<"Compile", "compile"> {
  let summary = "what a compilation is asked for";
  let description = [{
    The compile's options (strata::CompileOptions), recorded on the module
    once when its stages begin (runStages) and read by every pass that
    depends on them, so that a dumped stage or a crash reproducer carries
    them with the IR:

    ```
    strata.compile = #strata.compile<target = "cuda", arch = "sm_90a",
        libraries = false, precision = "bf16", decisions = "keep.json",
        input_shapes = {x = array<i64: 3, 8>}, input_values = {n = array<f64: 4.0>}>
    ```

    - `target`: "cpu", "cuda" or "rocm" (strata/Target/Target.h);
    - `arch`: the processor (--cpu), "native" when not given;
    - `libraries`: hand ops to vendor libraries (false: --no-libraries);
    - `host_kernels`: every op that has one runs as a host kernel;
    - `precision`: storage between kernels, "" (as the model says), "fp16"
      or "bf16";
    - `decisions`: a decisions file (docs/explain.md), "" for none;
    - `input_shapes`, `input_values`: the shapes and values given for
      inputs, by name.

    `strata-compile-options` sets it from pass options (for strata-opt and
    the registered stage pipelines); a pass's own option of the same name,
    when given, overrides it for that pass.
  }];
  let parameters = (ins
    StringRefParameter<"the target", "\"cpu\"">:$target,
    StringRefParameter<"the processor", "\"native\"">:$arch,
    Kernel_Flag<"hand ops to vendor libraries", "true">:$libraries,
    Kernel_Flag<"every op with a host kernel runs as one">:$host_kernels,
    StringRefParameter<"storage between kernels", "\"\"">:$precision,
    StringRefParameter<"a decisions file", "\"\"">:$decisions,
    OptionalParameter<"::mlir::DictionaryAttr", "shapes by input">:$input_shapes,
    OptionalParameter<"::mlir::DictionaryAttr", "values by input">:$input_values
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // STRATA_KERNEL_BASE_TD
