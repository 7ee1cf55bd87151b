// --verify-diagnostics matches the errors, warnings, notes and remarks that ember-opt emits
// against `expected-*` comments: on the same line or `@+N` / `@-N` lines away, with the text in
// `{{...}}` found as a substring of the message. Everything matches here, so the run succeeds.

// RUN: ember-opt %s --split-input-file --verify-diagnostics

// -----
func.func @next_line(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{are not broadcast-compatible}}
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @same_line(%a: tensor<4xi32>) {
  %0 = "ember.floor"(%a) : (tensor<4xi32>) -> tensor<4xi32> // expected-error {{must have floating-point elements}}
  return
}

// -----
func.func @line_above(%a: tensor<4xf32>) {
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  // expected-error @-1 {{result #0 has type tensor<5xf32>}}
  return
}

// -----
// Several lines away, and two diagnostics on one line (an MLIR error and its note).
func.func @offset_and_note(%a: tensor<4xf32>) {
  // expected-error @+3 {{op expects exactly 1 operands, but got 2}}
  // expected-note @+2 {{see current operation}}

  %0 = "ember.neg"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
// Parse errors can be expected too.
func.func @parse_error(%a: tensor<4xf32>) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  %0 = "ember.neg"(%undefined) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
// A valid chunk needs no expectations.
func.func @valid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
