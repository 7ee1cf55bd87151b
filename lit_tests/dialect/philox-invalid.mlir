// Verifier errors of the Philox ops, one case per chunk: the state must be a [3] i64
// TensorFlow Philox state, the distribution one of four, bits integers and the rest floats,
// a constant shape holds no negative dim, and uniform_int's bounds are same-typed scalars.

// RUN: ember-opt %s --split-input-file --verify-diagnostics

// -----
func.func @state_of_two_words(%s: tensor<2xi64>, %n: tensor<1xi64>) {
  // expected-error @+1 {{'ember.philox_random' op state of type tensor<2xi64> must have shape [3]}}
  %0 = "ember.philox_random"(%s, %n) {distribution = "uniform", dtype = f32} : (tensor<2xi64>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----
func.func @unknown_distribution(%s: tensor<3xi64>, %n: tensor<1xi64>) {
  // expected-error @+1 {{'ember.philox_random' op distribution 'gamma' is not one of bits, uniform, normal, truncated_normal}}
  %0 = "ember.philox_random"(%s, %n) {distribution = "gamma", dtype = f32} : (tensor<3xi64>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----
func.func @float_bits(%s: tensor<3xi64>, %n: tensor<1xi64>) {
  // expected-error @+1 {{'ember.philox_random' op bits have dtype i32 or i64, got f32}}
  %0 = "ember.philox_random"(%s, %n) {distribution = "bits", dtype = f32} : (tensor<3xi64>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----
func.func @negative_constant_dim(%s: tensor<3xi64>) {
  %n = "ember.constant"() {value = dense<[2, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+1 {{'ember.philox_random' op shape operand has a negative dimension -1}}
  %0 = "ember.philox_random"(%s, %n) {distribution = "normal", dtype = f32} : (tensor<3xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----
func.func @mixed_bounds(%s: tensor<3xi64>, %n: tensor<1xi64>, %lo: tensor<i32>, %hi: tensor<i64>) {
  // expected-error @+1 {{'ember.philox_uniform_int' op minval tensor<i32> and maxval tensor<i64> must have the same element type}}
  %0 = "ember.philox_uniform_int"(%s, %n, %lo, %hi) : (tensor<3xi64>, tensor<1xi64>, tensor<i32>, tensor<i64>) -> tensor<?xi32>
  return
}
