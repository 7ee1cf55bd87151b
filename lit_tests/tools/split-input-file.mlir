// --split-input-file processes each chunk between `// -----` lines on its own and prints the
// results separated by `// -----`. Symbols may repeat across chunks; errors keep the line
// numbers of the whole file, and one bad chunk fails the run without hiding the others.

// RUN: ember-opt %s --split-input-file | FileCheck %s
// RUN: ember-opt %s --split-input-file | ember-opt --split-input-file | FileCheck %s
// RUN: sed 's/tensor<4xi32>) -> tensor<4xi32>$/tensor<4xi32>) -> tensor<5xi32>/' %s > %t.mlir
// RUN: not ember-opt %t.mlir --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR
// RUN: not ember-opt %t.mlir --split-input-file 2>/dev/null | FileCheck %s --check-prefix=PARTIAL
// RUN: not ember-opt %s 2>&1 | FileCheck %s --check-prefix=WHOLE

// The header chunk (these comments) is an empty module.
// CHECK:       module {
// CHECK-NEXT:  }
// CHECK-NEXT:  // -----
// CHECK-NEXT:  module {
// CHECK-NEXT:    func.func @f(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:      "ember.neg"
// CHECK:       // -----
// CHECK-NEXT:  module {
// CHECK-NEXT:    func.func @f(%{{.*}}: tensor<4xi32>) -> tensor<4xi32> {
// CHECK-NEXT:      "ember.abs"
// CHECK:       // -----
// CHECK-NEXT:  module {
// CHECK-NEXT:    func.func @g(
// CHECK-NOT:   // -----

// With the second chunk broken, the other chunks are still printed.
// PARTIAL:     "ember.neg"
// PARTIAL-NOT: "ember.abs"
// PARTIAL:     func.func @g(

// Without the flag the markers are ordinary comments, and the two @f clash.
// WHOLE:       error: redefinition of symbol named 'f'

// -----
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  // ERR:       .tmp.mlir:[[@LINE+2]]:8: error: 'ember.abs' op result #0 has type tensor<5xi32> but the operands give tensor<4xi32>
  // ERR-NOT:   error:
  %0 = "ember.abs"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %x : tensor<4xi32>
}

// -----
func.func @g() {
  return
}
