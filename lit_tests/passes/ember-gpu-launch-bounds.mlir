// ember-gpu-launch-bounds: a kernel launched only with its known block size requires
// exactly that size (nvvm.reqntid, PTX .reqntid) instead of bounding it (nvvm.maxntid);
// a bound that differs from the known size, or a function that is no kernel, is kept.

// RUN: ember-opt %s -p 'builtin.module(ember-gpu-launch-bounds)' | FileCheck %s

// CHECK-LABEL: llvm.func @exact()
// CHECK-SAME:    nvvm.reqntid = array<i32: 8, 32, 1>
// CHECK-NOT:     nvvm.maxntid
// CHECK-LABEL: llvm.func @other_bound()
// CHECK-SAME:    nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK-LABEL: llvm.func @helper()
// CHECK-SAME:    nvvm.maxntid = array<i32: 8, 32, 1>
gpu.module @kernels {
  llvm.func @exact() attributes {gpu.kernel, gpu.known_block_size = array<i32: 8, 32, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 8, 32, 1>} {
    llvm.return
  }
  llvm.func @other_bound() attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
    llvm.return
  }
  llvm.func @helper() attributes {gpu.known_block_size = array<i32: 8, 32, 1>, nvvm.maxntid = array<i32: 8, 32, 1>} {
    llvm.return
  }
}
