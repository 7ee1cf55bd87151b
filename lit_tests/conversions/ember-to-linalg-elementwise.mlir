// convert-ember-to-linalg on elementwise ops: one parallel linalg.generic per op, broadcasting
// in the indexing maps (a rank-0 operand reads `() `), the scalar op in the body; integer
// floor division guards 0 and -1 divisors (numpy's results, no trap). Chains are fused as they
// are lowered: an operand made by an elementwise op of the same shape that nothing else uses
// is computed inside its consumer's generic. Broadcast operands, values used twice and
// `fuse-elementwise=false` keep one generic per op.

// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s
// RUN: ember-opt %s -p 'convert-ember-to-linalg{fuse-elementwise=false}' --split-input-file | FileCheck %s --check-prefix=NOFUSE

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @ops(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<f32>, %[[I:.*]]: tensor<4xi32>, %[[J:.*]]: tensor<4xi32>)
// CHECK:       %[[GT:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel"]} ins(%[[X]], %[[S]] : tensor<4xf32>, tensor<f32>)
// CHECK:         arith.cmpf ogt
// CHECK:       } -> tensor<4xi1>
// The select reads the comparison (returned too, so not fused) from memory.
// CHECK:       %[[SEL:.*]] = linalg.generic {{.*}} ins(%[[GT]], %[[X]], %[[S]] : tensor<4xi1>, tensor<4xf32>, tensor<f32>)
// CHECK:         arith.select
// CHECK:       %[[DIV:.*]] = linalg.generic {{.*}} ins(%[[I]], %[[J]] : tensor<4xi32>, tensor<4xi32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         %[[MINUS1:.*]] = arith.constant -1 : i32
// CHECK:         %[[BY0:.*]] = arith.cmpi eq, %{{.*}}, %[[ZERO]] : i32
// CHECK:         arith.floordivsi
// CHECK:         arith.select %[[BY0]], %[[ZERO]]
// CHECK:       %[[CAST:.*]] = linalg.generic {{.*}} ins(%[[I]] : tensor<4xi32>) outs(%{{.*}} : tensor<4xf64>)
// CHECK:         arith.sitofp %{{.*}} : i32 to f64
// CHECK:       return %[[GT]], %[[SEL]], %[[DIV]], %[[CAST]]
func.func @ops(%x: tensor<4xf32>, %s: tensor<f32>, %i: tensor<4xi32>, %j: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xf64>) {
  %0 = "ember.greater"(%x, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %1 = "ember.select"(%0, %x, %s) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = "ember.floordiv"(%i, %j) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = "ember.cast"(%i) {dtype = f64} : (tensor<4xi32>) -> tensor<4xf64>
  return %0, %1, %2, %3 : tensor<4xi1>, tensor<4xf32>, tensor<4xi32>, tensor<4xf64>
}

// -----

// A chain of three ops: one generic reading the two inputs once each, no intermediate
// tensors and no stand-ins left behind.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK-NOT:   unrealized_conversion_cast
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:  %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) {
// CHECK-NEXT:  ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[PROD:.*]] = arith.mulf %[[SUM]], %[[A]] : f32
// CHECK:         %[[NEG:.*]] = arith.negf %[[PROD]] : f32
// CHECK-NEXT:    linalg.yield %[[NEG]] : f32
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]
// NOFUSE-LABEL: func.func @chain(
// NOFUSE-COUNT-3: linalg.generic
// NOFUSE-NOT:   linalg.generic
// NOFUSE:       return
func.func @chain(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Negative: %0 has two users, so it is computed once into a tensor both read.
// CHECK-LABEL: func.func @used_twice(
// CHECK:       %[[NEG:.*]] = linalg.generic
// CHECK:         arith.negf
// CHECK:       linalg.generic {{.*}} ins(%[[NEG]] : tensor<4xf32>)
// CHECK:         arith.mulf
// CHECK:       linalg.generic {{.*}} ins(%[[NEG]] : tensor<4xf32>)
// CHECK:         math.absf
func.func @used_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "ember.mul"(%0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "ember.abs"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: a broadcast operand is computed once (3 elements), not once per row.
// CHECK-LABEL: func.func @broadcast(
// CHECK:       %[[NEG:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<3xf32>)
// CHECK:         arith.negf
// CHECK:       linalg.generic {{.*}} ins(%[[NEG]], %{{.*}} : tensor<3xf32>, tensor<2x3xf32>)
func.func @broadcast(%x: tensor<3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "ember.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.add"(%0, %y) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Dynamic sizes: fused the same way; the destination's size is read from the input.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>)
// CHECK:       %[[D:.*]] = tensor.dim %[[X]]
// CHECK:       %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[X]] : tensor<?xf32>) outs(%[[E]] : tensor<?xf32>)
// CHECK:         arith.negf
// CHECK:         arith.mulf
// CHECK-NOT:   linalg.generic
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = "ember.neg"(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = "ember.mul"(%0, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Negative: a value made outside a loop is not recomputed inside its body.
// CHECK-LABEL: func.func @into_a_loop(
// CHECK:       %[[NEG:.*]] = linalg.generic
// CHECK:         arith.negf
// CHECK:       scf.while
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %[[NEG]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:         arith.addf
func.func @into_a_loop(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %zero = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = scf.while (%i = %zero, %acc = %x) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {
    %lt = "ember.less"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c = tensor.extract %lt[] : tensor<i1>
    scf.condition(%c) %i, %acc : tensor<i32>, tensor<4xf32>
  } do {
  ^bb0(%i: tensor<i32>, %acc: tensor<4xf32>):
    %one = "ember.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %next = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %sum = "ember.add"(%acc, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %next, %sum : tensor<i32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
