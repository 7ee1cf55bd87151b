// ember-prepare-blas, on tensors before bufferization: a transpose feeding a float product
// folds into the product's indexing map (so the GEMM reads the untransposed buffer with a
// transpose flag instead of a copy), and a zero fill that CSE shared between two products
// becomes one fill per product, right before it (so no buffer is filled once and copied).

// RUN: ember-opt %s -p ember-prepare-blas | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<32x64xf32>, %[[B:[a-z0-9]+]]: tensor<32x48xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[F1:.*]] = linalg.fill
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[A]], %[[B]] : tensor<32x64xf32>, tensor<32x48xf32>) outs(%[[F1]] :
// CHECK:         %[[F2:.*]] = linalg.fill
// CHECK:         linalg.matmul ins({{.*}}) outs(%[[F2]] :
// CHECK-NOT:     linalg.fill
func.func @f(%a: tensor<32x64xf32>, %b: tensor<32x48xf32>, %c: tensor<48x48xf32>)
    -> (tensor<64x48xf32>, tensor<64x48xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %et = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%a : tensor<32x64xf32>) outs(%et : tensor<64x32xf32>)
         permutation = [1, 0]
  %r = linalg.matmul ins(%t, %b : tensor<64x32xf32>, tensor<32x48xf32>)
                     outs(%z : tensor<64x48xf32>) -> tensor<64x48xf32>
  %s = linalg.matmul ins(%r, %c : tensor<64x48xf32>, tensor<48x48xf32>)
                     outs(%z : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r, %s : tensor<64x48xf32>, tensor<64x48xf32>
}
