// Verifier errors of the scans and searchsorted (their specs' type inference), one case per
// chunk, each message pinned.

// RUN: ember-opt %s --split-input-file --verify-diagnostics

// -----
// The scanned axis must be in [-rank, rank).
func.func @cumsum_bad_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'ember.cumsum' op axis 2 is out of range for rank 2}}
  %0 = "ember.cumsum"(%x) {axis = 2 : i64, exclusive = false, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
// A scalar has no axis to scan.
func.func @cumprod_scalar(%x: tensor<i32>) {
  // expected-error @+1 {{'ember.cumprod' op axis 0 is out of range for rank 0: a scan needs an operand of rank >= 1}}
  %0 = "ember.cumprod"(%x) {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<i32>) -> tensor<i32>
  return
}

// -----
// Booleans do not add.
func.func @cumsum_bool(%x: tensor<3xi1>) {
  // expected-error @+1 {{'ember.cumsum' op operand of type tensor<3xi1> must have numeric (integer or floating-point) elements}}
  %0 = "ember.cumsum"(%x) {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<3xi1>) -> tensor<3xi1>
  return
}

// -----
// The batch (leading) dims must agree.
func.func @searchsorted_leading_dims(%s: tensor<2x5xf32>, %v: tensor<3x3xf32>) {
  // expected-error @+1 {{'ember.searchsorted' op sorted_sequence tensor<2x5xf32> and values tensor<3x3xf32> must have the same rank and leading dims (all but the last)}}
  %0 = "ember.searchsorted"(%s, %v) {out_type = i32, side = "left"} : (tensor<2x5xf32>, tensor<3x3xf32>) -> tensor<3x3xi32>
  return
}

// -----
// side is "left" or "right".
func.func @searchsorted_side(%s: tensor<5xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'ember.searchsorted' op side must be 'left' or 'right', got 'up'}}
  %0 = "ember.searchsorted"(%s, %v) {out_type = i32, side = "up"} : (tensor<5xf32>, tensor<3xf32>) -> tensor<3xi32>
  return
}
