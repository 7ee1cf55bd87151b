// convert-ember-to-linalg on ember.sort: an iota of indices, then an scf.while doubling the
// run width w while w < n; each pass is one parallel linalg.generic over the output
// positions yielding (value, index), whose body finds its source with a merge-path binary
// search (an inner scf.while over lo < hi). Floats compare with NaN above every number
// (`cmpf ult` and `cmpf ord`), ui8 unsigned; descending swaps the comparison's operands.

// RUN: ember-opt %s -p convert-ember-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @sort(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?xf32>
// CHECK:         %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?xi32>)
// CHECK:           linalg.index 0 : index
// CHECK:           arith.index_cast %{{.*}} : index to i32
// CHECK:         %[[R:.*]]:3 = scf.while (%[[W:.*]] = %{{.*}}, %{{.*}} = %[[X]], %{{.*}} = %[[IOTA]]) : (index, tensor<?xf32>, tensor<?xi32>)
// CHECK:           arith.cmpi slt, %[[W]], %[[N]] : index
// CHECK:         } do {
// CHECK:           %[[M:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi32>)
// CHECK:             scf.while
// CHECK:               tensor.extract
// CHECK:               %[[LT:.*]] = arith.cmpf ult, %[[B:.*]], %[[A:.*]] : f32
// CHECK:               arith.cmpf ord, %[[B]], %[[B]] : f32
// CHECK:               scf.yield
// CHECK:             linalg.yield %{{.*}}, %{{.*}} : f32, i32
// CHECK:           scf.yield %{{.*}}, %[[M]]#0, %[[M]]#1 : index, tensor<?xf32>, tensor<?xi32>
// CHECK:         return %[[R]]#1, %[[R]]#2 : tensor<?xf32>, tensor<?xi32>
// CHECK-NOT:     ember.sort
func.func @sort(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>) {
  %v, %i = "ember.sort"(%x) {descending = false} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>)
  return %v, %i : tensor<?xf32>, tensor<?xi32>
}

// Descending on ui8 (signless i8 after lowering): unsigned compares, A[m] < B[k] means B
// comes first; batch rows are a parallel dim of the same generic.
// CHECK-LABEL: func.func @sort_desc(
// CHECK:         scf.while
// CHECK:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x5xi8>, tensor<2x5xi32>)
// CHECK:             %[[ROW:.*]] = linalg.index 0 : index
// CHECK:             scf.while
// CHECK:               %[[B:.*]] = tensor.extract %{{.*}}[%[[ROW]], %{{.*}}] : tensor<2x5xi8>
// CHECK:               %[[A:.*]] = tensor.extract %{{.*}}[%[[ROW]], %{{.*}}] : tensor<2x5xi8>
// CHECK:               arith.cmpi ult, %[[A]], %[[B]] : i8
func.func @sort_desc(%x: tensor<2x5xui8>) -> (tensor<2x5xui8>, tensor<2x5xi32>) {
  %v, %i = "ember.sort"(%x) {descending = true} : (tensor<2x5xui8>) -> (tensor<2x5xui8>, tensor<2x5xi32>)
  return %v, %i : tensor<2x5xui8>, tensor<2x5xi32>
}

// ember.unique: the stable sort above, then an scf.for over sorted positions writing each
// element's first occurrence (rep) where a run of equal values starts (`cmpf oeq`: -0.0
// joins 0.0, NaN never equals), then an scf.for over the input compacting first
// occurrences (rep[i] == i) into the output and writing idx; the output is a slice of the
// count written.
// CHECK-LABEL: func.func @unique(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]]
// CHECK:         %[[S:.*]]:3 = scf.while
// CHECK:         %[[REP:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<?xi32>, i32)
// CHECK:           arith.cmpf oeq
// CHECK:           tensor.insert %{{.*}} into %{{.*}} : tensor<?xi32>
// CHECK:         %[[C:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args({{.*}}) -> (tensor<?xf32>, tensor<?xi64>, index)
// CHECK:           tensor.extract %[[REP]]#0
// CHECK:           tensor.insert %{{.*}} into %{{.*}} : tensor<?xf32>
// CHECK:           tensor.insert %{{.*}} into %{{.*}} : tensor<?xi64>
// CHECK:         %[[Y:.*]] = tensor.extract_slice %[[C]]#0[0] [%[[C]]#2] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK:         return %[[Y]], %[[C]]#1 : tensor<?xf32>, tensor<?xi64>
func.func @unique(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi64>) {
  %y, %i = "ember.unique"(%x) {out_idx = i64} : (tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi64>)
  return %y, %i : tensor<?xf32>, tensor<?xi64>
}
