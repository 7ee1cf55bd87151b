# RUN: %python %s | FileCheck %s
# em.cond becomes scf.if (branch shapes joined with tensor.cast); em.while_loop scf.while.
import ember as em


@em.function
def pick(x, flag):
    return em.cond(flag, lambda: x[:2], lambda: x[2:])


print(pick.get_concrete_function(em.TensorSpec([4], em.float32),
                                  em.TensorSpec([], em.bool)).mlir("traced"))
# CHECK-LABEL: func.func @pick(%arg0: tensor<4xf32>, %arg1: tensor<i1>) -> tensor<2xf32>
# CHECK:         %[[C:.*]] = tensor.extract %arg1[] : tensor<i1>
# CHECK:         scf.if %[[C]] -> (tensor<2xf32>)
# CHECK:           "ember.strided_slice"(%arg0)
# CHECK:           scf.yield {{.*}} : tensor<2xf32>
# CHECK:         } else {
# CHECK:           scf.yield {{.*}} : tensor<2xf32>


@em.function
def ragged(x, flag):
    return em.cond(flag, lambda: x[:1], lambda: x)


print(ragged.get_concrete_function(em.TensorSpec([4], em.float32),
                                   em.TensorSpec([], em.bool)).mlir("traced"))
# CHECK-LABEL: func.func @ragged
# CHECK:         scf.if {{.*}} -> (tensor<?xf32>)
# CHECK:           tensor.cast {{.*}} : tensor<1xf32> to tensor<?xf32>
# CHECK:           tensor.cast {{.*}} : tensor<4xf32> to tensor<?xf32>


@em.function
def count_up(n):
    return em.while_loop(lambda i: i < n, lambda i: (i + 1,), (em.constant(0),))


print(count_up.get_concrete_function(em.TensorSpec([], em.int32)).mlir("traced"))
# CHECK-LABEL: func.func @count_up(%arg0: tensor<i32>) -> tensor<i32>
# CHECK:         scf.while (%[[I:.*]] = %{{.*}}) : (tensor<i32>) -> tensor<i32>
# CHECK:           "ember.less"(%[[I]], %arg0)
# CHECK:           scf.condition
# CHECK:         } do {
# CHECK:           "ember.add"
# CHECK:           scf.yield
