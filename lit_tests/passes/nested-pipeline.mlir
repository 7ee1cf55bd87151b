// Ember passes run inside MLIR's PassManager: nested under func.func they run on each
// function, interleaved with upstream passes in one run, and MLIR's own instrumentation
// (IR printing, timing) shows them by name.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize,ember-cse),canonicalize)' | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize,ember-cse),canonicalize)' --print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize,cse,ember-cse),canonicalize)' --print-ir-after=ember-cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: ember-opt %s -p 'builtin.module(func.func(ember-canonicalize,ember-cse),canonicalize)' --timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMING

// ember-canonicalize folds x * 1.0 (exact for floats), ember-cse merges the two exps,
// upstream canonicalize erases the dead arith ops; @g is processed on its own.
// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[E:.*]] = "ember.exp"(%[[X]])
// CHECK-NEXT:    %[[M:.*]] = "ember.mul"(%[[E]], %[[E]])
// CHECK-NEXT:    return %[[M]]
// CHECK-LABEL: func.func @g(
// CHECK-NEXT:    %[[N:.*]] = "ember.neg"
// CHECK-NEXT:    "ember.sub"(%[[N]], %[[N]])

// PRINT:      IR Dump After ember-canonicalize (ember-canonicalize) ('func.func' operation: @f)
// PRINT:      IR Dump After ember-cse (ember-cse) ('func.func' operation: @f)
// PRINT:      IR Dump After ember-canonicalize (ember-canonicalize) ('func.func' operation: @g)
// PRINT:      IR Dump After ember-cse (ember-cse) ('func.func' operation: @g)
// PRINT:      IR Dump After Canonicalizer (canonicalize) ('builtin.module' operation)

// A named pass is printed after each run of it (the whole module, once per function).
// AFTER:      IR Dump After ember-cse
// AFTER:        "ember.mul"(%[[E1:.*]], %[[E1]])
// AFTER:      IR Dump After ember-cse
// AFTER-NOT:  IR Dump After

// TIMING:     Execution time report
// TIMING-DAG: ember-canonicalize
// TIMING-DAG: ember-cse

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %a = "ember.mul"(%x, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %d = "ember.mul"(%b, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c1 = arith.constant 1 : i32
  %c2 = arith.addi %c1, %c1 : i32
  return %d : tensor<4xf32>
}

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %d = "ember.sub"(%b, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
