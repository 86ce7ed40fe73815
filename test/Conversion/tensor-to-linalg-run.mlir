// The tensor (data movement) lowerings of strata-convert-graph-to-linalg
// compose with upstream bufferization and lowering to LLVM and compute the
// values ONNX defines; the expected values were computed with numpy
// (x.T, x[2::-1, 3::-2], np.pad(x, ((0, 1), (2, 1)), "reflect"), data[[-1, 0]]).
// --lower-affine is needed for the index arithmetic of reshapes and strided
// windows.
//
// RUN: strata-opt --strata-convert-graph-to-linalg %s \
// RUN: | mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
// RUN:     --convert-linalg-to-loops --lower-affine --convert-scf-to-cf \
// RUN:     --convert-math-to-llvm --convert-math-to-funcs --convert-math-to-libm \
// RUN:     --arith-expand --expand-strided-metadata --lower-affine \
// RUN:     --convert-arith-to-llvm --finalize-memref-to-llvm --convert-cf-to-llvm \
// RUN:     --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @print(%t: tensor<*xf32>) {
  %buffer = bufferization.to_buffer %t : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%buffer) : (memref<*xf32>) -> ()
  return
}

// CHECK: sizes = [3, 2]
// CHECK-NEXT: [0, 3]
// CHECK-NEXT: [1, 4]
// CHECK-NEXT: [2, 5]
func.func @transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// Negative steps with constant operands: rows 2, 1, 0 and columns 3, 1
// (ends beyond the start are clamped to -1).
// CHECK: sizes = [3, 2]
// CHECK-NEXT: [11, 9]
// CHECK-NEXT: [7, 5]
// CHECK-NEXT: [3, 1]
func.func @slice_negative_steps(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %starts = arith.constant dense<[3, 2]> : tensor<2xi64>
  %ends = arith.constant dense<[-100, -10]> : tensor<2xi64>
  %axes = arith.constant dense<[1, 0]> : tensor<2xi64>
  %steps = arith.constant dense<[-2, -1]> : tensor<2xi64>
  %0 = graph.slice %x, %starts, %ends axes %axes steps %steps : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// The same slice with starts, axes and steps known only at run time (the
// result shape is static); the start 30 is clamped to the last row.
// CHECK: sizes = [3, 2]
// CHECK-NEXT: [11, 9]
// CHECK-NEXT: [7, 5]
// CHECK-NEXT: [3, 1]
func.func @slice_runtime(%x: tensor<3x4xf32>, %starts: tensor<2xi64>, %ends: tensor<2xi64>, %axes: tensor<2xi64>, %steps: tensor<2xi64>) -> tensor<3x2xf32> {
  %0 = graph.slice %x, %starts, %ends axes %axes steps %steps : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// CHECK: sizes = [2, 2]
// CHECK-NEXT: [5, 6]
// CHECK-NEXT: [1, 2]
func.func @gather_negative(%data: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %indices = arith.constant dense<[-1, 0]> : tensor<2xi64>
  %0 = graph.gather %data, %indices {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK: sizes = [3, 6]
// CHECK-NEXT: [3, 2, 1, 2, 3, 2]
// CHECK-NEXT: [6, 5, 4, 5, 6, 5]
// CHECK-NEXT: [3, 2, 1, 2, 3, 2]
func.func @pad_reflect(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %pads = arith.constant dense<[0, 2, 1, 1]> : tensor<4xi64>
  %0 = graph.pad %x, %pads {mode = "reflect"} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

func.func @main() {
  %a = arith.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %t = call @transpose(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %t_u = tensor.cast %t : tensor<3x2xf32> to tensor<*xf32>
  call @print(%t_u) : (tensor<*xf32>) -> ()

  %m = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]> : tensor<3x4xf32>
  %s = call @slice_negative_steps(%m) : (tensor<3x4xf32>) -> tensor<3x2xf32>
  %s_u = tensor.cast %s : tensor<3x2xf32> to tensor<*xf32>
  call @print(%s_u) : (tensor<*xf32>) -> ()

  %starts = arith.constant dense<[30, -1]> : tensor<2xi64>
  %ends = arith.constant dense<[-10, -100]> : tensor<2xi64>
  %axes = arith.constant dense<[0, -1]> : tensor<2xi64>
  %steps = arith.constant dense<[-1, -2]> : tensor<2xi64>
  %r = call @slice_runtime(%m, %starts, %ends, %axes, %steps) : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x2xf32>
  %r_u = tensor.cast %r : tensor<3x2xf32> to tensor<*xf32>
  call @print(%r_u) : (tensor<*xf32>) -> ()

  %d = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %g = call @gather_negative(%d) : (tensor<3x2xf32>) -> tensor<2x2xf32>
  %g_u = tensor.cast %g : tensor<2x2xf32> to tensor<*xf32>
  call @print(%g_u) : (tensor<*xf32>) -> ()

  %p_in = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %p = call @pad_reflect(%p_in) : (tensor<2x3xf32>) -> tensor<3x6xf32>
  %p_u = tensor.cast %p : tensor<3x6xf32> to tensor<*xf32>
  call @print(%p_u) : (tensor<*xf32>) -> ()
  return
}
