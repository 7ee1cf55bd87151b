// convert-ember-to-linalg on the scatter ops. tensor_scatter is an scf.for over the index
// rows carrying the destination, which starts as the tensor operand (destination passing:
// bufferization updates it in place); each component is checked against its dim, calling
// the op's error site with (row, column, value, size, column); the row's slice is combined
// in place (extract_slice of the destination as the generic's outs, insert_slice back), or
// one element with tensor.extract/insert when the index depth is the rank. where_indices
// counts the trues, makes a tensor.empty of that many rows and fills it in a second nest.

// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @ember_error_0(i64, i64, i64, i64, i64)
// CHECK-SAME:    ember.error = "InvalidArgumentError", ember.message = "indices[{}, {}] = {} is out of range [0, {}) for dim {} of the tensor", ember.op = "ember.tensor_scatter"
// CHECK-LABEL: func.func @scatter_add_rows(
// CHECK-SAME:    %[[T:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<2x1xi32>, %[[U:.*]]: tensor<2x3xf32>)
// CHECK:       %[[R:.*]] = scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[D:.*]] = %[[T]]) -> (tensor<5x3xf32>) {
// CHECK:         %[[E:.*]] = tensor.extract %[[I]][%[[ROW]], %{{.*}}] : tensor<2x1xi32>
// CHECK:         %[[V:.*]] = arith.extsi %[[E]] : i32 to i64
// CHECK:         %[[BAD:.*]] = arith.ori
// CHECK:         scf.if %[[BAD]] {
// CHECK:           func.call @ember_error_0(%{{.*}}, %{{.*}}, %[[V]], %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i64) -> ()
// CHECK:         %[[K:.*]] = arith.index_cast %[[V]] : i64 to index
// CHECK:         %[[NEW:.*]] = tensor.extract_slice %[[U]][%[[ROW]], 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
// CHECK:         %[[OLD:.*]] = tensor.extract_slice %[[D]][%[[K]], 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<3xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[NEW]] : tensor<3xf32>) outs(%[[OLD]] : tensor<3xf32>)
// CHECK:           arith.addf
// CHECK:         %[[INS:.*]] = tensor.insert_slice %[[SUM]] into %[[D]][%[[K]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<5x3xf32>
// CHECK:         scf.yield %[[INS]] : tensor<5x3xf32>
// CHECK:       return %[[R]]
func.func @scatter_add_rows(%t: tensor<5x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "add"} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// update of single elements on `?` dims: the updates' dim must equal the indices' (a shape
// site, eager's error), then one tensor.insert per row; max on ui8 compares unsigned.
// CHECK-LABEL: func.func @scatter_update_elements(
// CHECK-SAME:    %[[T:.*]]: tensor<?x3xi32>, %[[I:.*]]: tensor<?x2xi64>, %[[U:.*]]: tensor<?xi32>)
// CHECK:       %[[N:.*]] = tensor.dim %[[I]], %{{.*}} : tensor<?x2xi64>
// CHECK:       %[[M:.*]] = tensor.dim %[[U]], %{{.*}} : tensor<?xi32>
// CHECK:       arith.cmpi ne, %[[M]], %[[N]] : index
// CHECK:       scf.if
// CHECK:         func.call @ember_error_{{[0-9]+}}({{.*}}) : (i64, i64, i64) -> ()
// CHECK:       scf.for {{.*}} iter_args(%[[D:.*]] = %[[T]]) -> (tensor<?x3xi32>) {
// CHECK:         %[[X:.*]] = tensor.extract %[[U]][%{{.*}}] : tensor<?xi32>
// CHECK:         %[[INS:.*]] = tensor.insert %[[X]] into %[[D]][%{{.*}}, %{{.*}}] : tensor<?x3xi32>
// CHECK:         scf.yield %[[INS]]
// CHECK-LABEL: func.func @scatter_max_ui8(
// CHECK:         arith.maxui
func.func @scatter_update_elements(%t: tensor<?x3xi32>, %i: tensor<?x2xi64>, %u: tensor<?xi32>) -> tensor<?x3xi32> {
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "update"} : (tensor<?x3xi32>, tensor<?x2xi64>, tensor<?xi32>) -> tensor<?x3xi32>
  return %0 : tensor<?x3xi32>
}
func.func @scatter_max_ui8(%t: tensor<4xui8>, %i: tensor<2x1xi32>, %u: tensor<2xui8>) -> tensor<4xui8> {
  %0 = "ember.tensor_scatter"(%t, %i, %u) {mode = "max"} : (tensor<4xui8>, tensor<2x1xi32>, tensor<2xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @where_indices(
// CHECK-SAME:    %[[C:.*]]: tensor<3x4xf32>)
// CHECK:       %[[COUNT:.*]] = scf.for {{.*}} -> (index) {
// CHECK:         scf.for {{.*}} -> (index) {
// CHECK:           %[[X:.*]] = tensor.extract %[[C]]
// CHECK:           arith.cmpf une, %[[X]]
// CHECK:       %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?x2xi64>
// CHECK:       %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[OUT]], %{{.*}} = %{{.*}}) -> (tensor<?x2xi64>, index) {
// CHECK:           scf.if %{{.*}} -> (tensor<?x2xi64>, index) {
// CHECK:             tensor.insert
// CHECK:             tensor.insert
// CHECK:       return %[[R]]#0 : tensor<?x2xi64>
func.func @where_indices(%c: tensor<3x4xf32>) -> tensor<?x2xi64> {
  %0 = "ember.where_indices"(%c) : (tensor<3x4xf32>) -> tensor<?x2xi64>
  return %0 : tensor<?x2xi64>
}
