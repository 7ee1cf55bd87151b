// convert-ember-to-linalg on the scans and searchsorted. A scan is an scf.for over the axis
// carrying the result and the running slice (the identity at first): slice k of the input is
// combined into it by a linalg.generic and inserted at k (before combining when exclusive;
// k = n - 1 - i when reverse). searchsorted is a generic over the values whose body is
// std::lower_bound/upper_bound as an scf.while reading the sequence with tensor.extract;
// `?` leading dims are compared at run time first.

// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s

// Inclusive and reversed, along a dynamic axis: the running 2x1 slice is added into, then
// inserted at n - 1 - i.
// CHECK-LABEL: func.func @cumsum_reverse(
// CHECK-SAME:    %[[X:.*]]: tensor<2x?xf32>)
// CHECK:       %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<2x?xf32>
// CHECK:       %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:       %[[ID:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<2x1xf32>)
// CHECK:       %[[LAST:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK:       %[[R:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}, %[[ACC:.*]] = %[[ID]]) -> (tensor<2x?xf32>, tensor<2x1xf32>)
// CHECK:         %[[K:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK:         %[[XK:.*]] = tensor.extract_slice %[[X]][0, %[[K]]] [2, 1] [1, 1] : tensor<2x?xf32> to tensor<2x1xf32>
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[XK]] : tensor<2x1xf32>) outs(%[[ACC]] : tensor<2x1xf32>)
// CHECK:           arith.addf
// CHECK:         %[[O:.*]] = tensor.insert_slice %[[A]] into %[[OUT]][0, %[[K]]] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x?xf32>
// CHECK:         scf.yield %[[O]], %[[A]]
// CHECK:       return %[[R]]#0
func.func @cumsum_reverse(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = "ember.cumsum"(%x) {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Exclusive product of ui8 (signless i8, wrapping muli): the running value is stored at k
// before slice k is multiplied in; the identity is 1.
// CHECK-LABEL: func.func @cumprod_exclusive(
// CHECK-SAME:    %[[X:.*]]: tensor<4xi8>)
// CHECK:       %[[ONE:.*]] = arith.constant 1 : i8
// CHECK:       %[[ID:.*]] = linalg.fill ins(%[[ONE]] : i8) outs(%{{.*}} : tensor<1xi8>)
// CHECK:       scf.for %[[I:.*]] = %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}, %[[ACC:.*]] = %[[ID]]) -> (tensor<4xi8>, tensor<1xi8>)
// CHECK:         %[[O:.*]] = tensor.insert_slice %[[ACC]] into %[[OUT]][%[[I]]] [1] [1]
// CHECK:         %[[XK:.*]] = tensor.extract_slice %[[X]][%[[I]]] [1] [1]
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[XK]] : tensor<1xi8>) outs(%[[ACC]] : tensor<1xi8>)
// CHECK:           arith.muli
// CHECK:         scf.yield %[[O]], %[[A]]
func.func @cumprod_exclusive(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "ember.cumprod"(%x) {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Batched upper bound with a dynamic batch dim: the dims are compared (the op's error at
// run time), then each value's row is searched in O(log n) probes.
// CHECK-LABEL: func.func @searchsorted_right(
// CHECK-SAME:    %[[S:.*]]: tensor<?x5xf32>, %[[V:.*]]: tensor<?x3xf32>)
// CHECK:       scf.if
// CHECK:         func.call @ember_error_0
// CHECK:       %[[C5:.*]] = arith.constant 5 : index
// CHECK:       linalg.generic {{.*}} ins(%[[V]] : tensor<?x3xf32>) outs(%{{.*}} : tensor<?x3xi64>)
// CHECK:       ^bb0(%[[VAL:.*]]: f32, %{{.*}}: i64):
// CHECK:         %[[ROW:.*]] = linalg.index 0 : index
// CHECK:         %[[W:.*]]:2 = scf.while (%[[F:.*]] = %{{.*}}, %[[C:.*]] = %[[C5]]) : (index, index) -> (index, index)
// CHECK:           arith.cmpi sgt
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK:           %[[STEP:.*]] = arith.shrui
// CHECK:           %[[IT:.*]] = arith.addi %{{.*}}, %[[STEP]] : index
// CHECK:           %[[P:.*]] = tensor.extract %[[S]][%[[ROW]], %[[IT]]] : tensor<?x5xf32>
// CHECK:           %[[LT:.*]] = arith.cmpf olt, %[[VAL]], %[[P]] : f32
// CHECK:           arith.xori %[[LT]]
// CHECK:           scf.yield
// CHECK:         %[[IDX:.*]] = arith.index_cast %[[W]]#0 : index to i64
// CHECK:         linalg.yield %[[IDX]] : i64
func.func @searchsorted_right(%s: tensor<?x5xf32>, %v: tensor<?x3xf32>) -> tensor<?x3xi64> {
  %0 = "ember.searchsorted"(%s, %v) {out_type = i64, side = "right"} : (tensor<?x5xf32>, tensor<?x3xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// Lower bound of i32 values: signed `seq[it] < value`, no run-time check (static dims).
// CHECK-LABEL: func.func @searchsorted_left(
// CHECK-NOT:     scf.if
// CHECK:         tensor.extract %{{.*}}[%{{.*}}] : tensor<6xi32>
// CHECK:         arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK:         arith.index_cast %{{.*}} : index to i32
func.func @searchsorted_left(%s: tensor<6xi32>, %v: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "ember.searchsorted"(%s, %v) {out_type = i32, side = "left"} : (tensor<6xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
