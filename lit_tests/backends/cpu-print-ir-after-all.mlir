// Each MLIR stage of the CPU backend is one pipeline of upstream and Ember passes, so
// MLIR's instrumentation shows every step, the workarounds included: IR printing after
// each pass, in order, and the timing report per stage. EMBER_BLAS=loops leaves the
// GEMM passes out.

// RUN: ember-compile %s --emit=llvm --print-ir-after-all -o /dev/null 2>&1 | FileCheck %s
// RUN: env EMBER_BLAS=loops ember-compile %s --emit=llvm --print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBLAS
// RUN: ember-compile %s --emit=bufferized --timing -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIME
// RUN: ember-compile %s --emit=llvm --print-ir-after=ember-round-to-bf16 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE

// CHECK: IR Dump After ember-dce
// CHECK: IR Dump After convert-ember-to-linalg
// CHECK: IR Dump After LinalgElementwiseOpFusionPass (linalg-fuse-elementwise-ops)
// CHECK: IR Dump After ember-copy-repeated-results
// CHECK: IR Dump After ember-drop-empty-concat-operands
// CHECK: IR Dump After ember-unrank-dynamic-results
// CHECK: IR Dump After ember-readonly-arguments
// CHECK: IR Dump After ember-prepare-blas
// CHECK: IR Dump After ember-check-bufferizable
// CHECK: IR Dump After OneShotBufferizePass (one-shot-bufferize)
// CHECK: IR Dump After ember-copy-repeated-results
// CHECK: IR Dump After ember-linalg-to-blas
// CHECK: IR Dump After ember-copies-to-linalg
// CHECK: IR Dump After ConvertLinalgToLoopsPass (convert-linalg-to-loops)
// CHECK: IR Dump After ember-outline-loop-nests
// CHECK: IR Dump After ember-widen-bool-memrefs
// CHECK: IR Dump After ArithEmulateUnsupportedFloats (arith-emulate-unsupported-floats) ('func.func' operation: @f)
// CHECK: IR Dump After ember-round-to-bf16
// CHECK: IR Dump After ReconcileUnrealizedCastsPass (reconcile-unrealized-casts)
// CHECK-NEXT: {{^}}module {

// NOBLAS-NOT: blas
// NOBLAS: IR Dump After ReconcileUnrealizedCastsPass

// TIME: Execution time report
// TIME: convert-ember-to-linalg
// TIME: Execution time report
// TIME: ember-unrank-dynamic-results
// TIME: OneShotBufferizePass

// ONE: IR Dump After ember-round-to-bf16
// ONE-NOT: IR Dump After
// ONE: func.func @f(
// ONE: arith.bitcast %{{.*}} : i16 to bf16
// ONE-NOT: IR Dump After

func.func @f(%a: tensor<4xbf16>, %b: tensor<4xi1>) -> (tensor<4xbf16>, tensor<4xi1>) {
  %0 = "ember.exp"(%a) : (tensor<4xbf16>) -> tensor<4xbf16>
  %1 = "ember.logical_not"(%b) : (tensor<4xi1>) -> tensor<4xi1>
  return %0, %1 : tensor<4xbf16>, tensor<4xi1>
}
