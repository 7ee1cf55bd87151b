// Input from a file or from stdin (no argument or `-`); output to stdout or to `-o FILE`.
// A missing input or an unwritable output is an `error:` with exit status 1.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt < %s | FileCheck %s
// RUN: ember-opt - < %s | FileCheck %s
// RUN: rm -f %t && ember-opt %s -o %t && FileCheck %s < %t
// RUN: not ember-opt %s.does-not-exist 2>&1 | FileCheck %s --check-prefix=NOINPUT
// RUN: not ember-opt %s -o %t.no-such-dir/out.mlir 2>&1 | FileCheck %s --check-prefix=NOOUTPUT

// CHECK:      func.func @f(%{{.*}}: tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT:   "ember.abs"

// NOINPUT:    error: cannot read '{{.*}}input-output.mlir.does-not-exist': No such file or directory
// NOOUTPUT:   error: cannot write '{{.*}}.no-such-dir/out.mlir': No such file or directory
func.func @f(%x: tensor<2xi64>) -> tensor<2xi64> {
  %0 = "ember.abs"(%x) : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
