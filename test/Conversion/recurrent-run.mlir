// The recurrent lowerings of strata-convert-graph-to-linalg compose with
// upstream bufferization and lowering to LLVM and compute what ONNX defines
// for RNN, GRU and LSTM: every direction, both layouts, sequence_lens,
// initial states, peepholes, clip, linear_before_reset, input_forget and all
// eleven activation functions with their alpha/beta.
//
// Expected values come from a separate float64 numpy implementation of the
// equations of the ONNX operator documents (which reproduces the ONNX
// backend-test outputs of the forward cases); inputs are multiples of 1/8 so
// that both sides start from the same f32 values. @check prints how many
// elements differ from the expected ones by more than 1e-5 + 1e-4 * |want|.
// Canonicalization, elementwise fusion and CSE run before bufferization, as
// in the compiler's kernel pipeline (lib/Compiler/KernelCodegen.cpp): the
// scf.for loops must still yield their iteration arguments' buffers then.
//
// RUN: strata-opt --strata-convert-graph-to-linalg %s \
// RUN: | mlir-opt --canonicalize --linalg-fuse-elementwise-ops --canonicalize --cse \
// RUN:     --one-shot-bufferize=bufferize-function-boundaries \
// RUN:     --convert-linalg-to-loops --lower-affine --convert-scf-to-cf \
// RUN:     --convert-math-to-llvm --convert-math-to-funcs --convert-math-to-libm \
// RUN:     --arith-expand --expand-strided-metadata --lower-affine \
// RUN:     --convert-arith-to-llvm --finalize-memref-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

// Prints the number of elements of %got outside the tolerance of %want (NaN
// counts as a mismatch).
func.func @check(%got: tensor<?xf32>, %want: tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1xf32>) -> tensor<1xf32>
  %count = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (0)>],
      iterator_types = ["reduction"]}
      ins(%got, %want : tensor<?xf32>, tensor<?xf32>) outs(%init : tensor<1xf32>) {
  ^bb0(%g: f32, %w: f32, %acc: f32):
    %atol = arith.constant 1.0e-5 : f32
    %rtol = arith.constant 1.0e-4 : f32
    %one = arith.constant 1.0 : f32
    %none = arith.constant 0.0 : f32
    %diff = arith.subf %g, %w : f32
    %error = math.absf %diff : f32
    %magnitude = math.absf %w : f32
    %scaled = arith.mulf %rtol, %magnitude : f32
    %tolerance = arith.addf %atol, %scaled : f32
    %bad = arith.cmpf ugt, %error, %tolerance : f32
    %add = arith.select %bad, %one, %none : f32
    %next = arith.addf %acc, %add : f32
    linalg.yield %next : f32
  } -> tensor<1xf32>
  %buffer = bufferization.to_buffer %count : tensor<1xf32> to memref<1xf32>
  %unranked = memref.cast %buffer : memref<1xf32> to memref<*xf32>
  call @printMemrefF32(%unranked) : (memref<*xf32>) -> ()
  return
}

// GRU, both directions, linear_before_reset, bias and initial_h, batch-first layout.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @gru_bidirectional_lbr() {
  %X = arith.constant dense<[[[-0.5, 0.375, -0.875], [0.875, 0.625, 0.875], [0.75, -0.875, -0.75]], [[-0.625, -0.375, -0.375], [1.0, -0.875, -0.75], [-0.625, 0.875, -0.25]]]> : tensor<2x3x3xf32>
  %W = arith.constant dense<[[[-0.5, -0.75, 0.0], [0.25, 0.75, 0.25], [1.0, -1.0, 0.0], [0.25, 0.5, -1.0], [-0.75, 0.0, -1.0], [1.0, 0.25, 0.75]], [[0.0, 0.25, -0.25], [-0.5, -0.75, -0.75], [0.5, -0.25, 0.75], [-0.5, 0.5, 0.75], [0.75, -0.75, -0.25], [-0.5, 0.75, 0.75]]]> : tensor<2x6x3xf32>
  %R = arith.constant dense<[[[-0.25, -0.5], [-1.0, -0.5], [-0.75, -1.0], [0.75, 0.0], [1.0, -0.5], [-0.25, 1.0]], [[0.25, -0.5], [-0.25, 0.5], [-0.25, 0.0], [0.0, 0.0], [0.0, 1.0], [-0.5, 1.0]]]> : tensor<2x6x2xf32>
  %B = arith.constant dense<[[-0.75, -1.0, -0.5, -0.5, 0.25, -0.75, -0.75, 1.0, 0.75, 0.0, 1.0, -0.25], [-1.0, 0.75, -1.0, -0.25, 0.0, 0.5, -0.75, -0.5, -1.0, -1.0, -0.75, 0.5]]> : tensor<2x12xf32>
  %h0 = arith.constant dense<[[[0.125, -0.375], [0.375, -0.375]], [[1.0, -0.5], [0.375, -0.5]]]> : tensor<2x2x2xf32>
  %r:2 = graph.gru %X, %W, %R bias %B initial_h %h0 {direction = "bidirectional", hidden_size = 2 : i64, layout = 1 : i64, linear_before_reset = 1 : i64} : (tensor<2x3x3xf32>, tensor<2x6x3xf32>, tensor<2x6x2xf32>, tensor<2x12xf32>, tensor<2x2x2xf32>) -> (tensor<2x3x2x2xf32>, tensor<2x2x2xf32>)
  %want0 = arith.constant dense<[[[[0.7971082925796509, -0.6759742498397827], [-0.36850181221961975, 0.5799759030342102]], [[0.15306343138217926, -0.24977847933769226], [-0.08332876116037369, 0.5956305861473083]], [[0.7301246523857117, -0.6074379682540894], [0.7685092091560364, -0.5055562257766724]]], [[[0.9780597686767578, -0.8763540387153625], [0.01224232092499733, 0.08237529546022415]], [[0.9832600951194763, -0.8947773575782776], [0.7435358166694641, 0.009285513311624527]], [[0.9289729595184326, -0.9394056797027588], [-0.521198034286499, 0.2528754472732544]]]]> : tensor<2x3x2x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<24xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<24xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<24xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<24xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[0.7301246523857117, -0.6074379682540894], [-0.36850181221961975, 0.5799759030342102]], [[0.9289729595184326, -0.9394056797027588], [0.01224232092499733, 0.08237529546022415]]]> : tensor<2x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<8xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<8xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// GRU, reverse, (r . H) Rh^T, clip, HardSigmoid/Softsign with parameters.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @gru_reverse_clip() {
  %X = arith.constant dense<[[[0.125, 0.125, 0.875], [-0.375, -0.875, -0.125]], [[0.25, -0.625, 1.0], [0.0, 0.0, 0.125]], [[0.125, -0.125, 0.125], [-0.25, 1.0, 1.0]]]> : tensor<3x2x3xf32>
  %W = arith.constant dense<[[[0.0, -1.0, -0.25], [-0.5, 0.25, 0.0], [-0.75, 0.25, -1.0], [-1.0, -1.0, -0.5], [1.0, -1.0, 0.25], [-1.0, -1.0, -0.5]]]> : tensor<1x6x3xf32>
  %R = arith.constant dense<[[[-0.75, -0.25], [-1.0, 0.75], [0.0, -1.0], [-1.0, 0.5], [-0.25, 0.0], [0.5, 0.25]]]> : tensor<1x6x2xf32>
  %B = arith.constant dense<[[0.5, -0.75, 0.5, 0.75, 0.0, -0.25, -0.5, -0.25, 0.75, 0.25, -0.75, -0.5]]> : tensor<1x12xf32>
  %r:2 = graph.gru %X, %W, %R bias %B {activation_alpha = array<f32: 0.3>, activation_beta = array<f32: 0.4>, activations = ["HardSigmoid", "Softsign"], clip = 0.9 : f32, direction = "reverse", hidden_size = 2 : i64} : (tensor<3x2x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>, tensor<1x12xf32>) -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>)
  %want0 = arith.constant dense<[[[[-0.22938096523284912, -0.4722699522972107], [-0.32823750376701355, 0.16601872444152832]]], [[[0.012249591760337353, -0.46280527114868164], [-0.40317821502685547, -0.45962223410606384]]], [[[-0.1825132966041565, -0.38999998569488525], [-0.4121052622795105, -0.3730263113975525]]]]> : tensor<3x1x2x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<3x1x2x2xf32> into tensor<12xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<12xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<3x1x2x2xf32> into tensor<12xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<12xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[-0.22938096523284912, -0.4722699522972107], [-0.32823750376701355, 0.16601872444152832]]]> : tensor<1x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<4xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<4xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// LSTM, both directions, sequence_lens, peepholes, initial_h and initial_c.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @lstm_bidirectional_lens() {
  %X = arith.constant dense<[[[-0.625, -0.125, -0.5], [-0.75, 0.25, 0.375]], [[-0.375, -0.875, -0.25], [-0.5, -0.25, -0.625]], [[-1.0, -0.75, 0.75], [0.125, 0.125, -0.625]]]> : tensor<3x2x3xf32>
  %W = arith.constant dense<[[[0.5, 0.5, 1.0], [-0.5, -1.0, 1.0], [1.0, 0.25, 1.0], [-1.0, 0.25, 0.25], [-0.75, -0.75, 0.0], [-0.25, 0.0, -0.75], [-0.25, -0.5, 0.0], [0.25, 0.0, 0.0]], [[-0.5, -1.0, 0.5], [1.0, 0.25, -0.5], [-0.25, 0.0, -0.25], [-0.75, 0.75, -0.25], [-1.0, 0.75, -1.0], [-0.5, -0.25, 0.75], [0.5, 0.25, 0.0], [0.25, 0.75, 1.0]]]> : tensor<2x8x3xf32>
  %R = arith.constant dense<[[[0.5, 0.0], [-0.75, -0.75], [-0.25, 0.25], [-0.75, 0.25], [0.75, 0.75], [-0.25, -0.75], [1.0, -0.75], [0.25, 1.0]], [[1.0, 0.25], [-0.25, -0.75], [0.5, -0.25], [-0.5, -0.25], [-0.75, -0.75], [-0.25, 0.25], [-0.25, -1.0], [-0.5, -1.0]]]> : tensor<2x8x2xf32>
  %B = arith.constant dense<[[-1.0, -0.5, 0.25, -0.25, -1.0, 0.25, 1.0, 1.0, 1.0, -0.5, 0.75, -0.75, -0.5, -0.75, 0.75, -1.0], [0.0, -0.75, 1.0, -0.75, 0.0, 1.0, 0.0, 0.75, 1.0, -0.75, 0.25, 0.75, 0.75, -1.0, 1.0, 0.25]]> : tensor<2x16xf32>
  %lens = arith.constant dense<[3, 1]> : tensor<2xi32>
  %h0 = arith.constant dense<[[[-0.5, -0.375], [-0.5, -0.25]], [[1.0, -0.625], [-0.625, 0.125]]]> : tensor<2x2x2xf32>
  %c0 = arith.constant dense<[[[0.375, 0.875], [0.625, 0.75]], [[-0.375, 0.625], [0.375, 0.0]]]> : tensor<2x2x2xf32>
  %P = arith.constant dense<[[0.5, 1.0, 0.75, 0.75, 0.75, 0.25], [-0.5, 1.0, 0.5, -1.0, -1.0, -0.75]]> : tensor<2x6xf32>
  %r:3 = graph.lstm %X, %W, %R bias %B sequence_lens %lens initial_h %h0 initial_c %c0 peepholes %P {direction = "bidirectional", hidden_size = 2 : i64} : (tensor<3x2x3xf32>, tensor<2x8x3xf32>, tensor<2x8x2xf32>, tensor<2x16xf32>, tensor<2xi32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x6xf32>) -> (tensor<3x2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>)
  %want0 = arith.constant dense<[[[[0.17674583196640015, 0.10460972785949707], [0.43561187386512756, 0.0023904661647975445]], [[0.5545967221260071, 0.0394630953669548], [0.47074344754219055, 0.0577586404979229]]], [[[0.2943962812423706, 0.03404885157942772], [0.0, 0.0]], [[0.3996105492115021, 0.05539757013320923], [0.0, 0.0]]], [[[0.5340992212295532, -0.028049811720848083], [0.0, 0.0]], [[0.29718637466430664, 0.13096009194850922], [0.0, 0.0]]]]> : tensor<3x2x2x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<3x2x2x2xf32> into tensor<24xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<24xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<3x2x2x2xf32> into tensor<24xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<24xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[0.5340992212295532, -0.028049811720848083], [0.43561187386512756, 0.0023904661647975445]], [[0.5545967221260071, 0.0394630953669548], [0.47074344754219055, 0.0577586404979229]]]> : tensor<2x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<8xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<8xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want2 = arith.constant dense<[[[0.8729274868965149, -0.06454312801361084], [0.637476921081543, 0.004305094014853239]], [[0.7310288548469543, 0.07141509652137756], [0.6834999918937683, 0.08250937610864639]]]> : tensor<2x2x2xf32>
  %got2_flat = tensor.collapse_shape %r#2 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %got2_dyn = tensor.cast %got2_flat : tensor<8xf32> to tensor<?xf32>
  %want2_flat = tensor.collapse_shape %want2 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %want2_dyn = tensor.cast %want2_flat : tensor<8xf32> to tensor<?xf32>
  call @check(%got2_dyn, %want2_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// LSTM, input_forget, LeakyRelu/ScaledTanh; Y unused.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @lstm_input_forget() {
  %X = arith.constant dense<[[[0.0, 0.875, 0.625], [-0.625, 0.25, -0.875]], [[-1.0, -0.25, 0.0], [0.5, -0.875, 0.25]], [[0.25, 0.125, -1.0], [0.5, -0.875, 0.75]]]> : tensor<3x2x3xf32>
  %W = arith.constant dense<[[[0.5, -1.0, 0.0], [1.0, -1.0, 0.25], [-1.0, 0.75, -0.75], [0.0, 0.25, -0.5], [-0.5, -0.75, 1.0], [0.5, -0.5, -0.75], [0.0, 0.75, 0.75], [-0.75, 0.5, -1.0]]]> : tensor<1x8x3xf32>
  %R = arith.constant dense<[[[0.0, 0.5], [-1.0, 0.0], [-0.75, -0.75], [0.75, -1.0], [0.5, -0.5], [0.5, 0.75], [1.0, -0.25], [1.0, 0.5]]]> : tensor<1x8x2xf32>
  %r:3 = graph.lstm %X, %W, %R {activation_alpha = array<f32: 0.2, 1.5>, activation_beta = array<f32: 0.5>, activations = ["Sigmoid", "LeakyRelu", "ScaledTanh"], hidden_size = 2 : i64, input_forget = 1 : i64} : (tensor<3x2x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>) -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>)
  %want1 = arith.constant dense<[[[0.01349376980215311, 0.2596127986907959], [-0.004354831762611866, -0.07473546266555786]]]> : tensor<1x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<4xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<4xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want2 = arith.constant dense<[[[0.029301190748810768, 0.5669532418251038], [-0.0372772291302681, -0.27899476885795593]]]> : tensor<1x2x2xf32>
  %got2_flat = tensor.collapse_shape %r#2 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %got2_dyn = tensor.cast %got2_flat : tensor<4xf32> to tensor<?xf32>
  %want2_flat = tensor.collapse_shape %want2 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %want2_dyn = tensor.cast %want2_flat : tensor<4xf32> to tensor<?xf32>
  call @check(%got2_dyn, %want2_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// LSTM, one step of one sequence, initial_h and initial_c: Y is Y_h.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @lstm_one_step() {
  %X = arith.constant dense<[[[-0.625, 1.0, -1.0]]]> : tensor<1x1x3xf32>
  %W = arith.constant dense<[[[0.25, 0.25, 0.25], [0.5, 0.75, 0.0], [-0.5, -0.25, 0.75], [0.5, -1.0, 1.0], [-0.75, -0.5, 0.75], [0.25, 0.25, -1.0], [0.75, 0.0, -0.25], [0.25, -1.0, -0.25]]]> : tensor<1x8x3xf32>
  %R = arith.constant dense<[[[0.25, 0.25], [0.25, -0.25], [-0.75, -0.75], [0.25, -0.75], [0.5, 0.25], [1.0, -1.0], [0.25, -0.75], [0.25, 0.75]]]> : tensor<1x8x2xf32>
  %B = arith.constant dense<[[0.25, 0.75, -0.25, 0.0, 0.0, -0.5, -0.25, -0.5, 0.0, 0.75, 0.25, 0.0, 0.25, -0.75, 0.75, -0.25]]> : tensor<1x16xf32>
  %h0 = arith.constant dense<[[[-0.75, -0.375]]]> : tensor<1x1x2xf32>
  %c0 = arith.constant dense<[[[-0.625, -0.125]]]> : tensor<1x1x2xf32>
  %r:3 = graph.lstm %X, %W, %R bias %B initial_h %h0 initial_c %c0 {hidden_size = 2 : i64} : (tensor<1x1x3xf32>, tensor<1x8x3xf32>, tensor<1x8x2xf32>, tensor<1x16xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2xf32>, tensor<1x1x2xf32>)
  %want0 = arith.constant dense<[[[[-0.003049885854125023, -0.06954871118068695]]]]> : tensor<1x1x1x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<1x1x1x2xf32> into tensor<2xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<2xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<1x1x1x2xf32> into tensor<2xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<2xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[-0.003049885854125023, -0.06954871118068695]]]> : tensor<1x1x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<2xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<2xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want2 = arith.constant dense<[[[-0.005658651702105999, -0.8853849768638611]]]> : tensor<1x1x2xf32>
  %got2_flat = tensor.collapse_shape %r#2 [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %got2_dyn = tensor.cast %got2_flat : tensor<2xf32> to tensor<?xf32>
  %want2_flat = tensor.collapse_shape %want2 [[0, 1, 2]] : tensor<1x1x2xf32> into tensor<2xf32>
  %want2_dyn = tensor.cast %want2_flat : tensor<2xf32> to tensor<?xf32>
  call @check(%got2_dyn, %want2_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// RNN, reverse, Relu, sequence_lens.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @rnn_reverse_lens() {
  %X = arith.constant dense<[[[-0.375, -0.125, 0.875], [0.625, 0.375, 0.75]], [[-0.75, 0.5, -0.375], [0.5, 0.375, 0.875]], [[-0.625, -0.75, 0.5], [1.0, 0.875, 0.75]]]> : tensor<3x2x3xf32>
  %W = arith.constant dense<[[[1.0, -1.0, 0.0], [-0.5, -0.25, 0.5]]]> : tensor<1x2x3xf32>
  %R = arith.constant dense<[[[-0.75, 0.75], [-0.75, -0.5]]]> : tensor<1x2x2xf32>
  %B = arith.constant dense<[[-1.0, -0.25, 0.75, -1.0]]> : tensor<1x4xf32>
  %lens = arith.constant dense<[2, 3]> : tensor<2xi32>
  %r:2 = graph.rnn %X, %W, %R bias %B sequence_lens %lens {activations = ["Relu"], direction = "reverse", hidden_size = 2 : i64} : (tensor<3x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x2xf32>, tensor<1x4xf32>, tensor<2xi32>) -> (tensor<3x1x2x2xf32>, tensor<1x2x2xf32>)
  %want0 = arith.constant dense<[[[[0.0, 0.0], [0.0, 0.0]]], [[[0.0, 0.0], [0.0, 0.0]]], [[[0.0, 0.0], [0.0, 0.0]]]]> : tensor<3x1x2x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<3x1x2x2xf32> into tensor<12xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<12xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<3x1x2x2xf32> into tensor<12xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<12xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[0.0, 0.0], [0.0, 0.0]]]> : tensor<1x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<4xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<1x2x2xf32> into tensor<4xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<4xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// RNN, both directions, Elu and Softplus.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @rnn_bidirectional_elu_softplus() {
  %X = arith.constant dense<[[[-0.375, 0.75, -0.5], [-0.375, 0.75, 0.875]], [[-0.75, -0.875, -0.75], [1.0, -0.5, -1.0]], [[0.75, -0.5, -0.75], [0.375, -0.625, 0.75]]]> : tensor<3x2x3xf32>
  %W = arith.constant dense<[[[1.0, -0.5, 0.75], [0.5, 0.5, 0.0]], [[-0.75, 0.0, 0.5], [-0.5, 1.0, -0.25]]]> : tensor<2x2x3xf32>
  %R = arith.constant dense<[[[0.5, 0.0], [0.0, -0.5]], [[0.5, 0.5], [1.0, 0.25]]]> : tensor<2x2x2xf32>
  %r:2 = graph.rnn %X, %W, %R {activation_alpha = array<f32: 0.7>, activations = ["Elu", "Softplus"], direction = "bidirectional", hidden_size = 2 : i64} : (tensor<3x2x3xf32>, tensor<2x2x3xf32>, tensor<2x2x2xf32>) -> (tensor<3x2x2x2xf32>, tensor<2x2x2xf32>)
  %want0 = arith.constant dense<[[[[-0.47274327278137207, 0.1875], [-0.06264274567365646, 0.1875]], [[1.250733494758606, 2.359952926635742], [1.525968313217163, 1.5382921695709229]]], [[[-0.46962493658065796, -0.41717442870140076], [0.46867862343788147, 0.15625]], [[1.0095586776733398, 0.7548379898071289], [0.39567527174949646, 0.7284676432609558]]], [[[0.20268753170967102, 0.3335872292518616], [1.4843393564224243, -0.1286766529083252]], [[0.3304581940174103, 0.4073510468006134], [0.7411203980445862, 0.3132616877555847]]]]> : tensor<3x2x2x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<3x2x2x2xf32> into tensor<24xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<24xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<3x2x2x2xf32> into tensor<24xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<24xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[0.20268753170967102, 0.3335872292518616], [1.4843393564224243, -0.1286766529083252]], [[1.250733494758606, 2.359952926635742], [1.525968313217163, 1.5382921695709229]]]> : tensor<2x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<8xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<8xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

// RNN, both directions, Affine and ThresholdedRelu, batch-first.
// CHECK: data =
// CHECK-NEXT: [0]
// CHECK: data =
// CHECK-NEXT: [0]
func.func @rnn_bidirectional_affine_thresholded() {
  %X = arith.constant dense<[[[-0.125, 0.875, -0.25], [0.625, 0.875, 0.0], [-0.5, -0.625, 0.0]], [[0.125, -1.0, 0.5], [0.25, 0.25, -0.25], [0.5, -1.0, -0.875]]]> : tensor<2x3x3xf32>
  %W = arith.constant dense<[[[0.0, -0.75, 0.0], [0.25, -0.5, 0.0]], [[-0.5, 0.25, 0.25], [-0.75, -1.0, -0.25]]]> : tensor<2x2x3xf32>
  %R = arith.constant dense<[[[-0.75, -0.25], [-0.75, 0.75]], [[-0.25, -0.75], [1.0, 1.0]]]> : tensor<2x2x2xf32>
  %B = arith.constant dense<[[0.75, -0.5, -0.25, 0.5], [0.5, -0.75, -0.25, -0.5]]> : tensor<2x4xf32>
  %r:2 = graph.rnn %X, %W, %R bias %B {activation_alpha = array<f32: 0.5, 0.1>, activation_beta = array<f32: 0.25>, activations = ["Affine", "ThresholdedRelu"], direction = "bidirectional", hidden_size = 2 : i64, layout = 1 : i64} : (tensor<2x3x3xf32>, tensor<2x2x3xf32>, tensor<2x2x2xf32>, tensor<2x4xf32>) -> (tensor<2x3x2x2xf32>, tensor<2x2x2xf32>)
  %want0 = arith.constant dense<[[[[0.171875, 0.015625], [0.46875, 0.0]], [[0.10546875, 0.05078125], [0.0, 0.0]], [[0.6884765625, 0.3232421875], [0.34375, 0.0]]], [[[0.875, 0.515625], [0.0, 0.0]], [[0.013671875, 0.083984375], [0.125, 0.0]], [[0.859375, 0.5888671875], [0.0, 0.0]]]]> : tensor<2x3x2x2xf32>
  %got0_flat = tensor.collapse_shape %r#0 [[0, 1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<24xf32>
  %got0_dyn = tensor.cast %got0_flat : tensor<24xf32> to tensor<?xf32>
  %want0_flat = tensor.collapse_shape %want0 [[0, 1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<24xf32>
  %want0_dyn = tensor.cast %want0_flat : tensor<24xf32> to tensor<?xf32>
  call @check(%got0_dyn, %want0_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  %want1 = arith.constant dense<[[[0.6884765625, 0.3232421875], [0.46875, 0.0]], [[0.859375, 0.5888671875], [0.0, 0.0]]]> : tensor<2x2x2xf32>
  %got1_flat = tensor.collapse_shape %r#1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %got1_dyn = tensor.cast %got1_flat : tensor<8xf32> to tensor<?xf32>
  %want1_flat = tensor.collapse_shape %want1 [[0, 1, 2]] : tensor<2x2x2xf32> into tensor<8xf32>
  %want1_dyn = tensor.cast %want1_flat : tensor<8xf32> to tensor<?xf32>
  call @check(%got1_dyn, %want1_dyn) : (tensor<?xf32>, tensor<?xf32>) -> ()
  return
}

func.func @main() {
  call @gru_bidirectional_lbr() : () -> ()
  call @gru_reverse_clip() : () -> ()
  call @lstm_bidirectional_lens() : () -> ()
  call @lstm_input_forget() : () -> ()
  call @lstm_one_step() : () -> ()
  call @rnn_reverse_lens() : () -> ()
  call @rnn_bidirectional_elu_softplus() : () -> ()
  call @rnn_bidirectional_affine_thresholded() : () -> ()
  return
}
