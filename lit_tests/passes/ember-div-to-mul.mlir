// ember-div-to-mul turns a float division by a power of two into a multiplication by its
// reciprocal: both round the same real number, so the result is bit-identical. It is a
// pattern pass (passes/rewrite.py) nested under func.func; the division's constant is
// erased once unused.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-div-to-mul))' --split-input-file | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-div-to-mul))' --split-input-file --pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// STATS: ember-div-to-mul:
// STATS-NEXT:   div-pow2: 1
// STATS: ember-div-to-mul:
// STATS-NEXT:   div-pow2: 3
// STATS-NOT: div-pow2

// x / 4 -> x * 0.25, the constant broadcast as before.
// CHECK-LABEL: func.func @quarter(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     "ember.div"
// CHECK:         %[[C:.*]] = "ember.constant"() {value = dense<2.500000e-01> : tensor<f32>}
// CHECK:         %[[M:.*]] = "ember.mul"(%[[X]], %[[C]]) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         return %[[M]]
func.func @quarter(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "ember.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %q = "ember.div"(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %q : tensor<4xf32>
}

// -----

// Negative powers, tiny powers the dtype still inverts exactly (bf16 has f32's exponent
// range), and divisions inside regions.
// CHECK-LABEL: func.func @signs_ranges_regions(
// CHECK-DAG:     "ember.constant"() {value = dense<-2.000000e+00> : tensor<2xf64>}
// CHECK-DAG:     "ember.constant"() {value = dense<7.888600e-31> : tensor<bf16>}
// CHECK:         scf.if
// CHECK:           "ember.constant"() {value = dense<8.000000e+00> : tensor<f32>}
// CHECK:           "ember.mul"
// CHECK-NOT:     "ember.div"
func.func @signs_ranges_regions(%x: tensor<2xf64>, %y: tensor<3xbf16>, %z: tensor<f32>, %p: i1) -> (tensor<2xf64>, tensor<3xbf16>, tensor<f32>) {
  %h = "ember.constant"() {value = dense<-0.5> : tensor<2xf64>} : () -> tensor<2xf64>
  %a = "ember.div"(%x, %h) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %big = "ember.constant"() {value = dense<0x7180> : tensor<bf16>} : () -> tensor<bf16>
  %b = "ember.div"(%y, %big) : (tensor<3xbf16>, tensor<bf16>) -> tensor<3xbf16>
  %r = scf.if %p -> tensor<f32> {
    %e = "ember.constant"() {value = dense<0.125> : tensor<f32>} : () -> tensor<f32>
    %d = "ember.div"(%z, %e) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %d : tensor<f32>
  } else {
    scf.yield %z : tensor<f32>
  }
  return %a, %b, %r : tensor<2xf64>, tensor<3xbf16>, tensor<f32>
}

// -----

// Negative: not a power of two, zero, a non-splat divisor, integers (their quotient is a
// float of another dtype), a reciprocal the dtype cannot hold (1/2^-20 overflows f16), a
// divisor that is not a constant and a constant dividend.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-7: "ember.div"
// CHECK-NOT:     "ember.mul"
func.func @left_alone(%x: tensor<2xf32>, %i: tensor<2xi32>, %h: tensor<2xf16>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf64>, tensor<2xf16>, tensor<2xf32>, tensor<2xf32>) {
  %three = "ember.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %zero = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %mixed = "ember.constant"() {value = dense<[2.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %two = "ember.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %tiny = "ember.constant"() {value = dense<9.5367431640625e-07> : tensor<f16>} : () -> tensor<f16>
  %four = "ember.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %a = "ember.div"(%x, %three) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %b = "ember.div"(%x, %zero) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %c = "ember.div"(%x, %mixed) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %d = "ember.div"(%i, %two) : (tensor<2xi32>, tensor<i32>) -> tensor<2xf64>
  %e = "ember.div"(%h, %tiny) : (tensor<2xf16>, tensor<f16>) -> tensor<2xf16>
  %f = "ember.div"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %g = "ember.div"(%four, %x) : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  return %a, %b, %c, %d, %e, %f, %g : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf64>, tensor<2xf16>, tensor<2xf32>, tensor<2xf32>
}
