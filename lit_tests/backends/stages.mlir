// ember-compile stops at any stage and resumes from a file written at an earlier one.

// RUN: ember-compile %s --emit=bufferized -o %t.buf.mlir
// RUN: FileCheck %s --check-prefix=BUF < %t.buf.mlir
// RUN: ember-compile %t.buf.mlir --from=bufferized --emit=llvm | FileCheck %s --check-prefix=LLVMDIALECT
// RUN: ember-compile %s --emit=llvmir -o %t.ll
// RUN: ember-compile %t.ll --from=llvmir --emit=asm --cpu=x86-64 --features= | FileCheck %s --check-prefix=ASM
// RUN: not ember-compile %t.ll --from=llvmir --emit=linalg 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not ember-compile %s --function=g --arg-types='tensor<4xf32>' 2>&1 | FileCheck %s --check-prefix=NOFN

// BUF-LABEL:  func.func @scale(%arg0: memref<4xf32>, %arg1: memref<4xf32>)
// BUF:          linalg.generic
// LLVMDIALECT:  llvm.func @scale(
// ASM:          scale:
// ORDER:        error: --emit=linalg comes before --from=llvmir
// NOFN:         error: no function @g in the module
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ember.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
