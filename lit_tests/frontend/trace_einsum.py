# RUN: %python %s | FileCheck %s
# em.einsum composes transpose/reshape/matmul/reduce_sum: an operand already in matmul order
# is read through the transpose flags, with no copy; the solvers trace to one scf.while
# whose failure flag feeds an ember.assert after the loop.
import ember as em


def traced(fn, *specs):
    print(em.function(fn).get_concrete_function(*specs).mlir("traced"))


traced(lambda a, b: em.einsum("bij,bkj->bik", a, b),
       em.TensorSpec([None, 3, 4]), em.TensorSpec([None, 5, 4]))
# CHECK-LABEL: func.func @_lambda_(
# CHECK-NOT:     ember.transpose
# CHECK-NOT:     ember.dynamic_reshape
# CHECK:         %[[P:.*]] = "ember.matmul"(%arg0, %arg1) {transpose_a = false, transpose_b = true}
# CHECK-SAME:      -> tensor<?x3x5xf32>
# CHECK-NEXT:    return %[[P]]

traced(lambda a: em.einsum("iij->ji", a), em.TensorSpec([3, 3, 2]))
# CHECK-LABEL: func.func @_lambda__1(
# CHECK:         "ember.transpose"(%arg0) {perm = array<i64: 2, 0, 1>}
# CHECK:         "ember.mul"
# CHECK:         %[[D:.*]] = "ember.reduce_sum"({{.*}}) {axes = array<i64: -1>, keepdims = false}
# CHECK-SAME:      -> tensor<2x3xf32>
# CHECK-NEXT:    return %[[D]]

traced(lambda a, b, c: em.einsum("ab,bc,cd->ad", a, b, c),
       em.TensorSpec([2, 3]), em.TensorSpec([3, 4]), em.TensorSpec([4, 5]))
# CHECK-LABEL: func.func @_lambda__2(
# CHECK:         %[[AB:.*]] = "ember.matmul"(%arg0, %arg1)
# CHECK:         "ember.matmul"(%[[AB]], %arg2)
# CHECK-SAME:      -> tensor<2x5xf32>

traced(em.linalg.inv, em.TensorSpec([None, 4, 4], em.float64))
# CHECK-LABEL: func.func @inv(
# CHECK:         scf.while
# CHECK:           "ember.argmax"
# CHECK:           scf.yield
# CHECK:         "ember.assert"({{.*}}) {message = "Input is not invertible."}
