// convert-ember-to-linalg on the bitwise ops: one linalg.generic each with arith's integer op in
// the body. Shift amounts are clamped to [0, bits - 1] first (TensorFlow's definition; arith's
// shifts by the bit width or more are poison): signed amounts between 0 and bits - 1, an
// unsigned one only from above. Right shifts are arithmetic for signed types, logical for
// unsigned ones; invert is xor with all ones.

// RUN: ember-opt %s -p 'convert-ember-to-linalg{fuse-elementwise=false}' | FileCheck %s

// CHECK-LABEL: func.func @bits(
// CHECK:       linalg.generic
// CHECK:         arith.andi %{{.*}}, %{{.*}} : i32
// CHECK:       linalg.generic
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i8
// CHECK:       linalg.generic
// CHECK:         arith.xori %{{.*}}, %{{.*}} : i64
// CHECK:       linalg.generic
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[TOP:.*]] = arith.constant 31 : i32
// CHECK:         %[[LOW:.*]] = arith.maxsi %{{.*}}, %[[ZERO]] : i32
// CHECK:         %[[AMOUNT:.*]] = arith.minsi %[[LOW]], %[[TOP]] : i32
// CHECK:         arith.shli %{{.*}}, %[[AMOUNT]] : i32
// CHECK:       linalg.generic
// CHECK:         %[[TOP8:.*]] = arith.constant 7 : i8
// CHECK:         %[[AMOUNT8:.*]] = arith.minui %{{.*}}, %[[TOP8]] : i8
// CHECK:         arith.shrui %{{.*}}, %[[AMOUNT8]] : i8
// CHECK:       linalg.generic
// CHECK:         arith.shrsi
// CHECK:       linalg.generic
// CHECK:         %[[ONES:.*]] = arith.constant -1 : i8
// CHECK:         arith.xori %{{.*}}, %[[ONES]] : i8
func.func @bits(%a: tensor<4xi32>, %u: tensor<4xui8>, %l: tensor<3xi64>, %b: tensor<4xi8>)
    -> (tensor<4xi32>, tensor<4xui8>, tensor<3xi64>, tensor<4xi32>, tensor<4xui8>, tensor<4xi8>, tensor<4xui8>) {
  %0 = "ember.bitwise_and"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "ember.bitwise_or"(%u, %u) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %2 = "ember.bitwise_xor"(%l, %l) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %3 = "ember.left_shift"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %4 = "ember.right_shift"(%u, %u) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %5 = "ember.right_shift"(%b, %b) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %6 = "ember.invert"(%u) : (tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xi32>, tensor<4xui8>, tensor<3xi64>, tensor<4xi32>, tensor<4xui8>, tensor<4xi8>, tensor<4xui8>
}
