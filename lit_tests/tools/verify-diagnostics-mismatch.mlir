// --verify-diagnostics fails (exit 1) when an expected diagnostic is not produced, when a
// diagnostic is produced that nobody expected, when the text differs, and when the line differs;
// each mismatch is reported with the line it was expected on.

// RUN: not ember-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

// -----
// The op is valid: the expected error never comes.
func.func @missing(%a: tensor<4xf32>) {
  // CHECK-DAG: verify-diagnostics-mismatch.mlir:[[@LINE+2]]: error: expected error "not broadcast-compatible" was not produced
  // expected-error @+1 {{not broadcast-compatible}}
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
// Nothing announces this error.
func.func @unexpected(%a: tensor<4xi32>) {
  // CHECK-DAG: verify-diagnostics-mismatch.mlir:[[@LINE+2]]:8: error: 'ember.floor' op operand of type tensor<4xi32> must have floating-point elements
  // CHECK-DAG: (unexpected error)
  %0 = "ember.floor"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----
// The right line, but another message.
func.func @wrong_text(%a: tensor<4xf32>) {
  // CHECK-DAG: verify-diagnostics-mismatch.mlir:[[@LINE+2]]: error: expected error "some other message" was not produced
  // expected-error @+1 {{some other message}}
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----
// The right message, but one line off.
func.func @wrong_line(%a: tensor<4xf32>) {
  // CHECK-DAG: verify-diagnostics-mismatch.mlir:[[@LINE+3]]: error: expected error "result #0 has type" was not produced
  // expected-error @+2 {{result #0 has type}}
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}
