// convert-ember-to-linalg on ember.lgamma/digamma. lgamma: a linalg.generic calling libm's
// lgammaf (f32; bf16 and f16 widened to f32 and rounded once) or lgamma (f64), declared
// privately in the module (upstream math has no lgamma op). digamma: computed in f64 with
// arith/math (poles NaN, reflection for x <= 0 in an scf.if, the shift unrolled, the
// asymptotic series), rounded once to the element type.

// The last chunk defines @lgammaf itself: an error naming it, while the others lower.
// RUN: not ember-opt %s -p convert-ember-to-linalg --split-input-file 2>/dev/null | FileCheck %s
// RUN: not ember-opt %s -p convert-ember-to-linalg --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @lgammas(
// CHECK:         linalg.generic
// CHECK:           func.call @lgammaf(%{{.*}}) : (f32) -> f32
// CHECK:         linalg.generic
// CHECK:           %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:           %[[L:.*]] = func.call @lgammaf(%[[W]]) : (f32) -> f32
// CHECK:           arith.truncf %[[L]] : f32 to bf16
// CHECK:         linalg.generic
// CHECK:           func.call @lgamma(%{{.*}}) : (f64) -> f64
func.func @lgammas(%x: tensor<4xf32>, %y: tensor<4xbf16>, %z: tensor<?xf64>) -> (tensor<4xf32>, tensor<4xbf16>, tensor<?xf64>) {
  %0 = "ember.lgamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.lgamma"(%y) : (tensor<4xbf16>) -> tensor<4xbf16>
  %2 = "ember.lgamma"(%z) : (tensor<?xf64>) -> tensor<?xf64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xbf16>, tensor<?xf64>
}

// CHECK-LABEL: func.func @digammas(
// CHECK:         linalg.generic
// CHECK:           %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           %[[NEG:.*]] = arith.cmpf ole, %[[X]], %{{.*}} : f64
// CHECK:           %[[FL:.*]] = math.floor %[[X]] : f64
// CHECK:           %[[INT:.*]] = arith.cmpf oeq, %[[FL]], %[[X]] : f64
// CHECK:           %[[POLE:.*]] = arith.andi %[[NEG]], %[[INT]] : i1
// CHECK:           %[[REFL:.*]] = scf.if %[[NEG]] -> (f64) {
// CHECK:             math.tan
// CHECK:           } else {
// CHECK:           arith.divf
// CHECK:           %[[Y:.*]] = arith.select %[[NEG]], %{{.*}}, %{{.*}} : f64
// CHECK:           %[[R:.*]] = arith.select %[[POLE]], %{{.*}}, %[[Y]] : f64
// CHECK:           arith.truncf %[[R]] : f64 to f32
// The libm functions are declared once, after the functions that call them.
// CHECK-DAG:   func.func private @lgammaf(f32) -> f32
// CHECK-DAG:   func.func private @lgamma(f64) -> f64
func.func @digammas(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.digamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ERR: cannot lower 'ember.lgamma': the module defines its own @lgammaf, which hides libm's: rename that function
func.func @lgammaf(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "ember.lgamma"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
