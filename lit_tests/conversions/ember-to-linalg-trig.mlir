// convert-ember-to-linalg on tan, the inverse and hyperbolic functions and atan2: each a
// linalg.generic applying the math op, which the CPU backend's convert-math-to-libm turns
// into a call of libm's (tanf, atan2, ...); f16 is computed in f32 and rounded once; atan2
// broadcasts its operands (y, x) like any binary op.

// RUN: ember-opt %s -p convert-ember-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @unary(
// CHECK:         math.tan %{{.*}} : f32
// CHECK:         math.asin %{{.*}} : f32
// CHECK:         math.acos %{{.*}} : f32
// CHECK:         math.atan %{{.*}} : f64
// CHECK:         math.sinh %{{.*}} : f32
// CHECK:         math.cosh %{{.*}} : f32
// CHECK:         math.asinh %{{.*}} : f32
// CHECK:         math.acosh %{{.*}} : f32
// CHECK:         %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[A:.*]] = math.atanh %[[W]] : f32
// CHECK:         arith.truncf %[[A]] : f32 to f16
func.func @unary(%x: tensor<4xf32>, %d: tensor<4xf64>, %h: tensor<?xf16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?xf16>) {
  %0 = "ember.tan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.asin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.acos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = "ember.atan"(%d) : (tensor<4xf64>) -> tensor<4xf64>
  %4 = "ember.sinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = "ember.cosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = "ember.asinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %7 = "ember.acosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %8 = "ember.atanh"(%h) : (tensor<?xf16>) -> tensor<?xf16>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?xf16>
}

// CHECK-LABEL: func.func @atan2(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           ^bb0(%[[Y:.*]]: f32, %[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:           math.atan2 %[[Y]], %[[X]] : f32
func.func @atan2(%y: tensor<2x3xf32>, %x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "ember.atan2"(%y, %x) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
