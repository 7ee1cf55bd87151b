// convert-ember-to-linalg on ember.assert: a run-time check (checks.py) that or-reduces
// "element is false" over the condition and calls the site's error function, whose
// attributes carry AssertionFailedError, the message and the op's location. A constant
// condition that holds emits nothing.

// RUN: ember-opt %s -p convert-ember-to-linalg | FileCheck %s

// CHECK:       func.func private @ember_error_0(i64) attributes {ember.error = "AssertionFailedError", ember.message = "x must be positive", ember.op = "ember.assert"
// CHECK-LABEL: func.func @assert(
// CHECK-SAME:    %[[C:.*]]: tensor<3xi1>
// CHECK:         %[[BAD:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %false) -> (i1)
// CHECK:           %[[E:.*]] = tensor.extract %[[C]]
// CHECK:           %[[NOT:.*]] = arith.xori %[[E]], %true
// CHECK:           arith.ori %[[ACC]], %[[NOT]]
// CHECK:         scf.if %[[BAD]] {
// CHECK-NEXT:      func.call @ember_error_0(
// CHECK-LABEL: func.func @holds(
// CHECK-NOT:     ember_error
// CHECK:         return
func.func @assert(%c: tensor<3xi1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  "ember.assert"(%c) {message = "x must be positive"} : (tensor<3xi1>) -> ()
  return %x : tensor<3xf32>
}

func.func @holds(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = "ember.constant"() {value = dense<true> : tensor<2xi1>} : () -> tensor<2xi1>
  "ember.assert"(%c) {message = "always"} : (tensor<2xi1>) -> ()
  return %x : tensor<3xf32>
}
