// Pipelines of ember passes: a misspelt pass gets a suggestion, a bad option value or an
// unknown option is an error naming the pass and its options (exit 1, no IR printed), and
// ember passes mix with upstream ones in one pipeline.

// RUN: not ember-opt %s -p ember-lcim 2>&1 | FileCheck %s
// RUN: not ember-opt %s -p 'builtin.module(ember-dce,ember-cse2)' 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not ember-opt %s -p 'ember-dce{max-iterations=many}' 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not ember-opt %s -p 'ember-optimize{max-iterations=0}' 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not ember-opt %s -p 'ember-inline{max-size=3}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not ember-opt %s -p 'ember-inline{max-ops}' 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not ember-opt %s -p 'func.func(ember-inline)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not ember-opt %s -p 'gpu.module(ember-dce)' 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-dce,canonicalize,ember-dce))' | FileCheck %s --check-prefix=MIXED
// RUN: not ember-opt %s -p ember-lcim 2>/dev/null | count 0
// RUN: ember-opt %s -p 'builtin.module(ember-dce,canonicalize,ember-dce)' | FileCheck %s --check-prefix=MIXED
// RUN: ember-opt %s -p 'ember-dce,canonicalize,ember-dce' | FileCheck %s --check-prefix=MIXED

// CHECK:   pipeline-errors.mlir: error: invalid pass pipeline: unknown pass 'ember-lcim' in pipeline 'ember-lcim'; did you mean 'ember-licm'?
// NESTED:  error: invalid pass pipeline: unknown pass 'ember-cse2' in pipeline 'builtin.module(ember-dce,ember-cse2)'; did you mean 'ember-cse'?
// VALUE:   error: invalid pass pipeline: option 'max-iterations' of ember-dce expects an integer, got 'many'
// RANGE:   error: invalid pass pipeline: option 'max-iterations' of ember-optimize must be at least 1, got 0
// OPTION:  error: invalid pass pipeline: ember-inline has no option 'max-size'; its options: max-ops
// NOVALUE: error: invalid pass pipeline: option 'max-ops' of ember-inline needs a value: 'max-ops=...'
// A pass that works across functions (ember-inline) cannot nest under func.func; ember
// passes nest under func.func only.
// ANCHOR:  error: invalid pass pipeline: ember-inline works on a whole module, so it cannot nest under func.func(...) in pipeline 'func.func(ember-inline)'; put it at the top level
// GPU:     error: invalid pass pipeline: ember passes nest only under func.func(...), not gpu.module(...), in pipeline 'gpu.module(ember-dce)'

// ember-dce erases the dead ember ops, canonicalize the dead arith ops; the effects stay.
// MIXED-LABEL: func.func @f(
// MIXED-SAME:    %[[X:.*]]: tensor<4xf32>, %[[R:.*]]: !ember.resource<tensor<4xf32>>)
// MIXED-NEXT:    %[[N:.*]] = "ember.neg"(%[[X]])
// MIXED-NEXT:    "ember.assign_variable"(%[[R]], %[[N]])
// MIXED-NEXT:    return %[[N]]
func.func @f(%x: tensor<4xf32>, %r: !ember.resource<tensor<4xf32>>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : i32
  %c2 = arith.addi %c1, %c1 : i32
  %dead = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %dead2 = "ember.neg"(%dead) : (tensor<4xf32>) -> tensor<4xf32>
  %n = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  "ember.assign_variable"(%r, %n) : (!ember.resource<tensor<4xf32>>, tensor<4xf32>) -> ()
  return %n : tensor<4xf32>
}
