// --timing shows MLIR's execution time report and, for a pass that runs passes inside it
// (ember-optimize's rounds), their total times nested under it; --pass-statistics adds
// MLIR's statistics report of the upstream passes to Ember's counters.

// RUN: ember-opt %s -p 'builtin.module(func.func(ember-optimize),cse)' --timing -o /dev/null 2>&1 | FileCheck %s
// RUN: ember-opt %s -p 'builtin.module(ember-optimize,cse)' --pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// CHECK:      Execution time report
// CHECK:      Execution time report
// CHECK:        ember-optimize
// CHECK:      Nested pass time report
// CHECK:      ----Wall Time----  ----Name----
// CHECK-NEXT: (100.0%)  ember-optimize
// CHECK-NEXT: %)    ember-canonicalize
// CHECK-NEXT: %)    ember-constant-fold
// CHECK-NEXT: %)    ember-cse
// CHECK-NEXT: %)    ember-licm
// CHECK-NEXT: %)    ember-dce

// STATS:      Pass statistics report
// STATS:      CSE
// STATS-NEXT:   (S) 0 num-cse'd
// STATS:      ember-optimize:
// STATS-NEXT:   ember-cse.eliminated: 1
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %a = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  %b = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  %y = "ember.add"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
