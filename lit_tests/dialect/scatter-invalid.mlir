// Verifier errors of the scatter ops, one case per chunk, each message pinned by a substring
// specific to the failure.

// RUN: ember-opt %s --split-input-file --verify-diagnostics

// -----
// updates must have shape indices.shape[:-1] + tensor.shape[k:] = [2, 3].
func.func @scatter_updates_shape(%t: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'ember.tensor_scatter' op updates of type tensor<2x4xf32> must have shape indices.shape[:-1] + tensor.shape[1:] = [2x3]}}
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "add"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----
// add on bool elements: only update takes them.
func.func @scatter_add_bool(%t: tensor<4xi1>, %i: tensor<1xi32>, %u: tensor<i1>) {
  // expected-error @+1 {{'ember.tensor_scatter' op mode 'add' needs numeric elements, got tensor<4xi1>}}
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "add"} : (tensor<4xi1>, tensor<1xi32>, tensor<i1>) -> tensor<4xi1>
  return
}

// -----
func.func @scatter_unknown_mode(%t: tensor<4xf32>, %i: tensor<1xi32>, %u: tensor<f32>) {
  // expected-error @+1 {{'ember.tensor_scatter' op mode must be one of ['update', 'add', 'sub', 'mul', 'max', 'min'], got 'div'}}
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "div"} : (tensor<4xf32>, tensor<1xi32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----
// The index depth (the last dim of indices) must be static.
func.func @scatter_dynamic_depth(%t: tensor<4xf32>, %i: tensor<2x?xi32>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'ember.tensor_scatter' op the last dim of indices (tensor<2x?xi32>) is the index depth and must be static}}
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "update"} : (tensor<4xf32>, tensor<2x?xi32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @where_indices_string(%c: tensor<3x!ember.string>) {
  // expected-error @+1 {{'ember.where_indices' op condition of type tensor<3x!ember.string> must be bool or numeric}}
  %0 = "ember.where_indices"(%c) : (tensor<3x!ember.string>) -> tensor<?x1xi64>
  return
}
