// convert-ember-to-linalg on the Philox ops: the [3] i64 state is read once, then one
// linalg.generic recomputes, per element, its group's Philox-4x32-10 block (group n / 4 or
// n / 2, 128-bit counter add with carry, ten rounds of arith.mului_extended) and converts the
// word(s) as TensorFlow does.

// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s

// Uniform f32: group n / 4, position n % 4; the round constants 0xD2511F53 and 0xCD9E8D57
// and Weyl steps 0x9E3779B9 / 0xBB67AE85 as i32; then bitcast((w & 0x7fffff) | 0x3f800000) - 1.
// CHECK-LABEL: func.func @uniform_f32(
// CHECK-SAME:    %[[STATE:.*]]: tensor<3xi64>) -> tensor<8xf32>
// CHECK:       %[[LO:.*]] = tensor.extract %[[STATE]][%{{.*}}] : tensor<3xi64>
// CHECK:       %[[HI:.*]] = tensor.extract %[[STATE]][%{{.*}}] : tensor<3xi64>
// CHECK:       %[[KEY:.*]] = tensor.extract %[[STATE]][%{{.*}}] : tensor<3xi64>
// CHECK:       linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<8xf32>)
// CHECK:         %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK:         %[[G:.*]] = arith.divui %[[N]], %[[FOUR]] : i64
// CHECK:         %[[J:.*]] = arith.remui %[[N]], %{{.*}} : i64
// CHECK:         %[[C0:.*]] = arith.addi %[[LO]], %[[G]] : i64
// CHECK:         %[[CARRY:.*]] = arith.cmpi ult, %[[C0]], %[[G]] : i64
// CHECK:         %[[C1:.*]] = arith.extui %[[CARRY]] : i1 to i64
// CHECK:         arith.addi %[[HI]], %[[C1]] : i64
// CHECK:         arith.trunci %[[KEY]] : i64 to i32
// CHECK:         %[[A:.*]] = arith.constant -766435501 : i32
// CHECK:         arith.mului_extended %[[A]], %{{.*}} : i32
// CHECK:         %[[B:.*]] = arith.constant -845247145 : i32
// CHECK:         arith.mului_extended %[[B]], %{{.*}} : i32
// CHECK:         arith.constant -1640531527 : i32
// CHECK:         arith.constant -1150833019 : i32
// CHECK-COUNT-9: arith.mului_extended %{{.*}}, %{{.*}} : i32
// CHECK:         arith.cmpi eq, %[[J]], %{{.*}} : i64
// CHECK:         %[[MAN:.*]] = arith.constant 8388607 : i32
// CHECK:         %[[M:.*]] = arith.andi %{{.*}}, %[[MAN]] : i32
// CHECK:         %[[EXP:.*]] = arith.constant 1065353216 : i32
// CHECK:         %[[W:.*]] = arith.ori %[[M]], %[[EXP]] : i32
// CHECK:         %[[F:.*]] = arith.bitcast %[[W]] : i32 to f32
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[U:.*]] = arith.subf %[[F]], %[[ONE]] : f32
// CHECK-NEXT:    linalg.yield %[[U]] : f32
func.func @uniform_f32(%state: tensor<3xi64>) -> tensor<8xf32> {
  %n = "ember.constant"() {value = dense<[8]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "ember.philox_random"(%state, %n) {distribution = "uniform", dtype = f32} : (tensor<3xi64>, tensor<1xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Truncated normal f64: groups of 2 start 128 blocks apart; an scf.while draws blocks until
// the element's accepted value (|z| < 2) is found; Box-Muller on 52-bit doubles.
// CHECK-LABEL: func.func @truncated_normal_f64(
// CHECK:       linalg.generic
// CHECK:         %[[G:.*]] = arith.divui %{{.*}}, %{{.*}} : i64
// CHECK:         %[[J:.*]] = arith.remui %{{.*}}, %{{.*}} : i64
// CHECK:         %[[STRIDE:.*]] = arith.constant 128 : i64
// CHECK:         %[[BASE:.*]] = arith.muli %[[G]], %[[STRIDE]] : i64
// CHECK:         %[[R:.*]]:4 = scf.while (%[[K:.*]] = %{{.*}}, %[[NEED:.*]] = %[[J]], %[[FOUND:.*]] = %false, %[[V:.*]] = %{{.*}}) : (i64, i64, i1, f64) -> (i64, i64, i1, f64)
// CHECK:           %[[MORE:.*]] = arith.xori %[[FOUND]], %{{.*}} : i1
// CHECK:           scf.condition(%[[MORE]])
// CHECK:         } do {
// CHECK:           arith.addi %[[BASE]], %{{.*}} : i64
// CHECK:           arith.constant 1048575 : i32
// CHECK:           arith.constant 4607182418800017408 : i64
// CHECK:           arith.bitcast %{{.*}} : i64 to f64
// CHECK:           math.log %{{.*}} : f64
// CHECK:           math.sqrt %{{.*}} : f64
// CHECK:           math.cos %{{.*}} : f64
// CHECK:           math.sin %{{.*}} : f64
// CHECK:           %[[TWO:.*]] = arith.constant 2.000000e+00 : f64
// CHECK:           arith.cmpf olt, %{{.*}}, %[[TWO]] : f64
// CHECK:           scf.yield
// CHECK:         linalg.yield %[[R]]#3 : f64
func.func @truncated_normal_f64(%state: tensor<3xi64>) -> tensor<3xf64> {
  %n = "ember.constant"() {value = dense<[3]> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = "ember.philox_random"(%state, %n) {distribution = "truncated_normal", dtype = f64} : (tensor<3xi64>, tensor<1xi32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Integers: span = maxval - minval (a zero span as 1), minval + word % span (unsigned); a
// shape read at run time is checked for negative dims first (eager's error).
// CHECK-LABEL: func.func @uniform_int_dynamic(
// CHECK-SAME:    %[[STATE:.*]]: tensor<3xi64>, %[[SHAPE:.*]]: tensor<1xi64>, %[[LO:.*]]: tensor<i32>, %[[HI:.*]]: tensor<i32>) -> tensor<?xi32>
// CHECK:       %[[L:.*]] = tensor.extract %[[LO]][] : tensor<i32>
// CHECK:       %[[H:.*]] = tensor.extract %[[HI]][] : tensor<i32>
// CHECK:       %[[D:.*]] = arith.subi %[[H]], %[[L]] : i32
// CHECK:       %[[Z:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : i32
// CHECK:       %[[SPAN:.*]] = arith.select %[[Z]], %{{.*}}, %[[D]] : i32
// CHECK:       scf.if
// CHECK:         func.call @ember_error_0
// CHECK:       %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?xi32>
// CHECK:       linalg.generic {{.*}} outs(%[[E]] : tensor<?xi32>)
// CHECK:         %[[REM:.*]] = arith.remui %{{.*}}, %[[SPAN]] : i32
// CHECK:         %[[OUT:.*]] = arith.addi %[[L]], %[[REM]] : i32
// CHECK-NEXT:    linalg.yield %[[OUT]] : i32
func.func @uniform_int_dynamic(%state: tensor<3xi64>, %n: tensor<1xi64>, %lo: tensor<i32>, %hi: tensor<i32>) -> tensor<?xi32> {
  %0 = "ember.philox_uniform_int"(%state, %n, %lo, %hi) : (tensor<3xi64>, tensor<1xi64>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}
