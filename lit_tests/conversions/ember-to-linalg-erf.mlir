// convert-ember-to-linalg on ember.erf/erfc: a linalg.generic applying math.erf/math.erfc,
// which the CPU backend's convert-math-to-libm turns into calls of libm's erff/erfcf; bf16
// is computed in f32 and rounded once.

// RUN: ember-opt %s -p convert-ember-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @erf(
// CHECK:         linalg.generic
// CHECK:           math.erf %{{.*}} : f32
// CHECK:         linalg.generic
// CHECK:           %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:           %[[E:.*]] = math.erfc %[[W]] : f32
// CHECK:           arith.truncf %[[E]] : f32 to bf16
func.func @erf(%x: tensor<4xf32>, %y: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %0 = "ember.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.erfc"(%y) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0, %1 : tensor<4xf32>, tensor<4xbf16>
}
