// convert-ember-to-linalg on the Philox ops: the [3] i64 state is read once; a first
// linalg.generic over the groups (ceil(n / 4), or n / 2 for 64-bit dtypes) computes each
// group's Philox-4x32-10 block once (128-bit counter add with carry, ten rounds of
// arith.mului_extended) into one tensor per position; a second fills the result, element n
// taking position n % G of group n / G.

// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s

// Uniform f32: the round constants 0xD2511F53 and 0xCD9E8D57 and Weyl steps 0x9E3779B9 /
// 0xBB67AE85 as i32; each word bitcast((w & 0x7fffff) | 0x3f800000) - 1.
// CHECK-LABEL: func.func @uniform_f32(
// CHECK-SAME:    %[[STATE:.*]]: tensor<3xi64>) -> tensor<8xf32>
// CHECK:       %[[LO:.*]] = tensor.extract %[[STATE]][%{{.*}}] : tensor<3xi64>
// CHECK:       %[[HI:.*]] = tensor.extract %[[STATE]][%{{.*}}] : tensor<3xi64>
// CHECK:       %[[KEY:.*]] = tensor.extract %[[STATE]][%{{.*}}] : tensor<3xi64>
// CHECK:       %[[P:.*]]:4 = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel"]} outs({{.*}} : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:         %[[G:.*]] = arith.index_cast %{{.*}} : index to i64
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
// CHECK-COUNT-18: arith.mului_extended %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     arith.mului_extended
// CHECK:         %[[MAN:.*]] = arith.constant 8388607 : i32
// CHECK:         %[[M:.*]] = arith.andi %{{.*}}, %[[MAN]] : i32
// CHECK:         %[[EXP:.*]] = arith.constant 1065353216 : i32
// CHECK:         %[[W:.*]] = arith.ori %[[M]], %[[EXP]] : i32
// CHECK:         %[[F:.*]] = arith.bitcast %[[W]] : i32 to f32
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[U0:.*]] = arith.subf %[[F]], %[[ONE]] : f32
// CHECK:         linalg.yield %[[U0]], %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK:         %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         %[[GROUP:.*]] = arith.divui %[[N]], %{{.*}} : i64
// CHECK:         %[[AT:.*]] = arith.index_cast %[[GROUP]] : i64 to index
// CHECK:         %[[J:.*]] = arith.remui %[[N]], %{{.*}} : i64
// CHECK:         %[[E0:.*]] = tensor.extract %[[P]]#0[%[[AT]]] : tensor<2xf32>
// CHECK:         tensor.extract %[[P]]#3[%[[AT]]] : tensor<2xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[FIRST:.*]] = arith.cmpi eq, %[[J]], %[[ZERO]] : i64
// CHECK-NEXT:    %[[V:.*]] = arith.select %[[FIRST]], %[[E0]], %{{.*}} : f32
// CHECK-NEXT:    linalg.yield %[[V]] : f32
func.func @uniform_f32(%state: tensor<3xi64>) -> tensor<8xf32> {
  %n = "ember.constant"() {value = dense<[8]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "ember.philox_random"(%state, %n) {distribution = "uniform", dtype = f32} : (tensor<3xi64>, tensor<1xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Truncated normal f64: group g starts 128 blocks after the counter; an scf.while draws
// blocks until both slots hold a value with |z| < 2 (Box-Muller on 52-bit doubles).
// CHECK-LABEL: func.func @truncated_normal_f64(
// CHECK:       %[[P:.*]]:2 = linalg.generic {{.*}} outs({{.*}} : tensor<2xf64>, tensor<2xf64>)
// CHECK:         %[[G:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:         %[[STRIDE:.*]] = arith.constant 128 : i64
// CHECK:         %[[BASE:.*]] = arith.muli %[[G]], %[[STRIDE]] : i64
// CHECK:         %[[R:.*]]:4 = scf.while (%{{.*}} = %{{.*}}, %[[FILLED:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (i64, i64, f64, f64) -> (i64, i64, f64, f64)
// CHECK:           %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:           %[[MORE:.*]] = arith.cmpi slt, %[[FILLED]], %[[TWO]] : i64
// CHECK:           scf.condition(%[[MORE]])
// CHECK:         } do {
// CHECK:           arith.addi %[[BASE]], %{{.*}} : i64
// CHECK:           arith.constant 1048575 : i32
// CHECK:           arith.constant 4607182418800017408 : i64
// CHECK:           arith.bitcast %{{.*}} : i64 to f64
// CHECK:           math.log %{{.*}} : f64
// CHECK:           math.sqrt %{{.*}} : f64
// CHECK:           math.sin %{{.*}} : f64
// CHECK:           math.cos %{{.*}} : f64
// CHECK:           %[[CUT:.*]] = arith.constant 2.000000e+00 : f64
// CHECK:           arith.cmpf olt, %{{.*}}, %[[CUT]] : f64
// CHECK:           scf.yield
// CHECK:         linalg.yield %[[R]]#2, %[[R]]#3 : f64, f64
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf64>)
// CHECK:         tensor.extract %[[P]]#0
// CHECK:         tensor.extract %[[P]]#1
func.func @truncated_normal_f64(%state: tensor<3xi64>) -> tensor<3xf64> {
  %n = "ember.constant"() {value = dense<[3]> : tensor<1xi32>} : () -> tensor<1xi32>
  %0 = "ember.philox_random"(%state, %n) {distribution = "truncated_normal", dtype = f64} : (tensor<3xi64>, tensor<1xi32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// Integers: span = maxval - minval (a zero span as 1), minval + word % span (unsigned); a
// shape read at run time is checked for negative dims first (eager's error), and the groups
// are ceil(n / 4) at run time.
// CHECK-LABEL: func.func @uniform_int_dynamic(
// CHECK-SAME:    %[[STATE:.*]]: tensor<3xi64>, %[[SHAPE:.*]]: tensor<1xi64>, %[[LO:.*]]: tensor<i32>, %[[HI:.*]]: tensor<i32>) -> tensor<?xi32>
// CHECK:       %[[L:.*]] = tensor.extract %[[LO]][] : tensor<i32>
// CHECK:       %[[H:.*]] = tensor.extract %[[HI]][] : tensor<i32>
// CHECK:       %[[D:.*]] = arith.subi %[[H]], %[[L]] : i32
// CHECK:       %[[Z:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : i32
// CHECK:       %[[SPAN:.*]] = arith.select %[[Z]], %{{.*}}, %[[D]] : i32
// CHECK:       scf.if
// CHECK:         func.call @ember_error_0
// CHECK:       %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:       %[[THREE:.*]] = arith.constant 3 : index
// CHECK:       %[[UP:.*]] = arith.addi %{{.*}}, %[[THREE]] : index
// CHECK:       %[[GROUPS:.*]] = arith.divui %[[UP]], %{{.*}} : index
// CHECK:       tensor.empty(%[[GROUPS]]) : tensor<?xi32>
// CHECK:       linalg.generic
// CHECK:         %[[REM:.*]] = arith.remui %{{.*}}, %[[SPAN]] : i32
// CHECK:         %[[OUT:.*]] = arith.addi %[[L]], %[[REM]] : i32
// CHECK:         linalg.yield %[[OUT]], %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32
// CHECK:       tensor.empty(%[[N]]) : tensor<?xi32>
func.func @uniform_int_dynamic(%state: tensor<3xi64>, %n: tensor<1xi64>, %lo: tensor<i32>, %hi: tensor<i32>) -> tensor<?xi32> {
  %0 = "ember.philox_uniform_int"(%state, %n, %lo, %hi) : (tensor<3xi64>, tensor<1xi64>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}
