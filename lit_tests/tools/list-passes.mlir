// --list-passes lists every registered pass and named pipeline with its one-line doc and
// options (name, type, default), as mlir-opt --help lists passes.

// RUN: ember-opt --list-passes | FileCheck %s

// CHECK:      Ember passes
// CHECK:        convert-ember-to-linalg every ember op becomes linalg
// CHECK-NEXT:       --fuse-elementwise=<bool> default: true
// CHECK-NEXT:       --blocked-sums=<bool> default: true
// CHECK:        ember-inline inline calls of nested Functions
// CHECK-NEXT:       --max-ops=<int> default: 64
// CHECK-NEXT:       --max-iterations=<int> default: 16
// CHECK:        ember-optimize the default optimisation pipeline {{.*}}[nests under func.func]
// CHECK:      Named pipelines
// CHECK:        ember-simplify ember-canonicalize,ember-constant-fold,ember-cse,ember-dce
// CHECK:      Upstream MLIR passes are accepted too
