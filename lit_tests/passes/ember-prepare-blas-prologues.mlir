// ember-prepare-blas takes an operand's elementwise function back out of a product whose
// body the fusion pass made `out += relu(x) * w` (a relu, then a flatten, then a Dense:
// three reduction dims h, w, c), so the product is a plain multiply-add again; then
// ember-linalg-to-blas (after bufferization) merges the reduction dims, contiguous in both
// operands, into one K of a GEMM call. A body that mixes both operands before the
// multiply stays as it is.

// RUN: ember-opt %s -p ember-prepare-blas | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-prepare-blas,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},ember-linalg-to-blas{min-macs=0})' | FileCheck %s --check-prefix=GEMM

#x = affine_map<(n, o, h, w, c) -> (n, h, w, c)>
#w = affine_map<(n, o, h, w, c) -> (h, w, c, o)>
#y = affine_map<(n, o, h, w, c) -> (n, o)>

// CHECK-LABEL: func.func @relu_flatten_dense(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<8x3x3x4xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<8x3x3x4xf32>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%[[X]] : tensor<8x3x3x4xf32>) outs(%[[E]] :
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<8x3x3x4xf32>, tensor<3x3x4x16xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[O]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32

// GEMM-LABEL: func.func @relu_flatten_dense(
// GEMM:         call @ember_sgemm({{.*}}) : (i32, i32, i32, i64, i64, i64, f32
// GEMM-LABEL: func.func @mixed(
// GEMM-NOT:     call @ember_sgemm
func.func @relu_flatten_dense(%x: tensor<8x3x3x4xf32>, %w: tensor<3x3x4x16xf32>)
    -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel",
       "parallel", "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<8x3x3x4xf32>, tensor<3x3x4x16xf32>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    %p = arith.mulf %m, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @mixed(
// CHECK:         linalg.generic
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      arith.mulf
func.func @mixed(%x: tensor<8x3x3x4xf32>, %w: tensor<3x3x4x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel",
       "parallel", "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<8x3x3x4xf32>, tensor<3x3x4x16xf32>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    %p = arith.mulf %m, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// A prologue that reads the loop indices (linalg.index) belongs to the product's loops, not
// to the operand's: it stays (found by the gradient fuzzer: moving it made invalid IR).
// CHECK-LABEL: func.func @indexed(
// CHECK:         linalg.generic
// CHECK:           linalg.index 2
// CHECK-NOT:     linalg.generic
func.func @indexed(%x: tensor<8x3x3x4xf32>, %w: tensor<3x3x4x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel",
       "parallel", "reduction", "reduction", "reduction"]}
       ins(%x, %w : tensor<8x3x3x4xf32>, tensor<3x3x4x16xf32>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %a, %f : f32
    %p = arith.mulf %m, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
