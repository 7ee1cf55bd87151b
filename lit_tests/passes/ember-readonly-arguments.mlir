// ember-readonly-arguments marks the tensor arguments of public functions
// `bufferization.writable = false` (keeping their other attributes; private functions keep
// the default): one-shot bufferization then copies an argument an op updates in place
// (here tensor.insert, as ember.tensor_scatter's lowering does) instead of writing into the
// caller's array.

// RUN: ember-opt %s -p ember-readonly-arguments | FileCheck %s
// RUN: ember-opt %s -p "ember-readonly-arguments,one-shot-bufferize{bufferize-function-boundaries}" | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @update(
// CHECK-SAME:    %{{.*}}: tensor<4xf32> {bufferization.writable = false}, %{{.*}}: f32 {llvm.noundef})
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME:    %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// BUF-LABEL:   func.func @update(
// BUF-SAME:      %[[T:.*]]: memref<4xf32, strided<[?], offset: ?>>
// BUF:           %[[A:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUF:           memref.copy %[[T]], %[[A]]
// BUF:           memref.store %{{.*}}, %[[A]]
func.func @update(%t: tensor<4xf32>, %v: f32 {llvm.noundef}) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  %0 = tensor.insert %v into %t[%c1] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func private @helper(%t: tensor<4xf32>) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}
