# RUN: %python %s | FileCheck %s
# A `for` loop over an em.data dataset is one scf.while that pulls an element per iteration
# through host calls (make the iterator, pull an optional element, release), whatever the
# data size; the element types come from the element_spec (`?` for a partial last batch).
import numpy as np

import ember as em


@em.function
def total(ds):
    s = em.constant(0.0)
    for batch in ds:
        s += em.reduce_sum(batch)
    return s


ds = em.data.Dataset.from_tensor_slices(np.ones((10, 2), np.float32)).batch(4)
print(total.get_concrete_function(ds).mlir("traced"))

# CHECK-DAG:   func.func private @__dataset_release_{{[0-9]+}}(tensor<i64>)
# CHECK-DAG:   func.func private @__dataset_next_{{[0-9]+}}(tensor<i64>) -> (tensor<i1>, tensor<?x2xf32>)
# CHECK-DAG:   func.func private @__dataset_iter_{{[0-9]+}}(tensor<i64>) -> tensor<i64>
# CHECK-LABEL: func.func @total{{.*}}(%arg0: tensor<i64>) -> tensor<f32>
# CHECK:         %[[IT:.*]] = call @__dataset_iter_{{[0-9]+}}(%arg0)
# CHECK:         scf.while
# CHECK:           %[[NEXT:.*]]:2 = func.call @__dataset_next_{{[0-9]+}}(%[[IT]])
# CHECK:           scf.if
# CHECK:             "ember.reduce_sum"(%[[NEXT]]#1)
# CHECK-NOT:     scf.while
# CHECK:         call @__dataset_release_{{[0-9]+}}(%[[IT]])
# CHECK:         return
