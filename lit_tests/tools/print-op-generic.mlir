// --mlir-print-op-generic prints every op, upstream ones included, in the generic form
// (`"dialect.op"(operands) <{properties}> {attributes} ({regions}) : type`), and that output
// parses back to the same module.

// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s --check-prefix=CUSTOM
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt --mlir-print-op-generic | FileCheck %s

// CHECK:      "builtin.module"() ({
// CHECK-NEXT:   "func.func"() <{function_type = (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>, sym_name = "f"}> ({
// CHECK-NEXT:   ^bb0(%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<?x3xf32>):
// CHECK-NEXT:     %[[C:.*]] = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:     %[[S:.*]] = "ember.add"(%[[A]], %[[C]]) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:     %[[CAT:.*]] = "tensor.concat"(%[[S]], %[[B]]) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT:     "func.return"(%[[CAT]]) : (tensor<?x3xf32>) -> ()
// CHECK-NEXT:   }) : () -> ()
// CHECK-NEXT: }) : () -> ()

// CUSTOM:      module {
// CUSTOM-NEXT:   func.func @f(%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<?x3xf32>) -> tensor<?x3xf32> {
// CUSTOM-NEXT:     %[[C:.*]] = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CUSTOM-NEXT:     %[[S:.*]] = "ember.add"(%[[A]], %[[C]]) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CUSTOM-NEXT:     %[[CAT:.*]] = tensor.concat dim(0) %[[S]], %[[B]] : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
// CUSTOM-NEXT:     return %[[CAT]] : tensor<?x3xf32>
func.func @f(%a: tensor<2x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %s = "ember.add"(%a, %c) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %cat = tensor.concat dim(0) %s, %b : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %cat : tensor<?x3xf32>
}
