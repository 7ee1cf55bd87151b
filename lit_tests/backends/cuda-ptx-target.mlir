// ember-compile --target cuda:sm_XX --emit=ptx prints the PTX of every kernel module, each
// after a `// gpu.binary @name` line, for that chip and the PTX ISA version LLVM needs for
// it (within what ptxas 12.x accepts); math functions come from libdevice, linked in
// (tanh, erf: no external call is left), lgamma too (ember-gpu-libdevice). Every kernel
// requires exactly its launch's block size. An unknown chip is refused with the list.

// RUN: ember-compile %s --target cuda:sm_90 --emit=ptx | FileCheck %s
// RUN: ember-compile %s --target cuda --emit=ptx | FileCheck %s --check-prefix=DEFAULT
// RUN: not ember-compile %s --target cuda:sm_99 --emit=ptx 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK:       // gpu.binary @f_kernel
// CHECK:       .version 8.0
// CHECK-NEXT:  .target sm_90
// CHECK-NEXT:  .address_size 64
// CHECK-NOT:   .extern
// CHECK-NOT:   .maxntid
// CHECK:       .visible .entry f_kernel(
// CHECK:       .reqntid {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}
// CHECK-NOT:   call
// CHECK:       ret;
// DEFAULT:     .target sm_80
// BAD:         error: --target: unknown CUDA target 'sm_99'; targets: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90
func.func @f(%x: tensor<33x65xf32>, %y: tensor<65xf32>) -> tensor<33x65xf32> {
  %0 = "ember.tanh"(%x) : (tensor<33x65xf32>) -> tensor<33x65xf32>
  %1 = "ember.erf"(%y) : (tensor<65xf32>) -> tensor<65xf32>
  %2 = "ember.lgamma"(%x) : (tensor<33x65xf32>) -> tensor<33x65xf32>
  %3 = "ember.add"(%0, %1) : (tensor<33x65xf32>, tensor<65xf32>) -> tensor<33x65xf32>
  %4 = "ember.mul"(%3, %2) : (tensor<33x65xf32>, tensor<33x65xf32>) -> tensor<33x65xf32>
  return %4 : tensor<33x65xf32>
}
