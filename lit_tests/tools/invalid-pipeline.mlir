// A pipeline that does not parse, or names an unknown pass or option, is an error (exit 1) that
// quotes the pipeline; the module is not printed.

// RUN: not ember-opt %s -p no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ember-opt %s -p 'builtin.module(canonicalize' 2>&1 | FileCheck %s --check-prefix=UNBALANCED
// RUN: not ember-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not ember-opt %s -p 'func.func(canonicalize,' 2>&1 | FileCheck %s --check-prefix=TRAILING
// RUN: not ember-opt %s -p no-such-pass 2>/dev/null | count 0

// UNKNOWN:    invalid-pipeline.mlir: error: invalid pass pipeline: unknown pass 'no-such-pass' in pipeline 'no-such-pass'
// UNBALANCED: invalid-pipeline.mlir: error: invalid pass pipeline: unbalanced brackets in pipeline 'builtin.module(canonicalize'
// OPTION:     invalid-pipeline.mlir: error: invalid pass pipeline: cannot use 'canonicalize{no-such-option=1}' in pipeline 'canonicalize{no-such-option=1}': {{.*}}no such option no-such-option
// TRAILING:   invalid-pipeline.mlir: error: invalid pass pipeline: unbalanced brackets in pipeline 'func.func(canonicalize,'
func.func @f() {
  return
}
