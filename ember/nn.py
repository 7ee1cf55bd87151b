"""`em.nn`: neural-network ops with tf.nn's names and signatures (the ops are in
`ember.frontend`; this module only re-exports)."""

from ember.frontend.nn_composites import (batch_normalization, bias_add, elu, embedding_lookup,
                                          gelu, l2_loss, l2_normalize,
                                          leaky_relu, moments, relu6, selu,
                                          sigmoid_cross_entropy_with_logits, silu, softplus,
                                          softmax_cross_entropy_with_logits, softsign,
                                          sparse_softmax_cross_entropy_with_logits, swish)
from ember.frontend.random_composites import dropout, stateless_dropout
from ember.frontend.sort_ops import top_k  # tf.nn.top_k, the same as tf.math.top_k
from ember.frontend.ops import (avg_pool2d, conv2d, log_softmax, max_pool2d, relu, sigmoid,
                                softmax, tanh)
from ember.frontend.nn_conv import (avg_pool, avg_pool1d, conv1d, conv2d_transpose, max_pool,
                                    max_pool1d)
from ember.frontend.nn_ops import depthwise_conv2d

__all__ = ["avg_pool2d", "batch_normalization", "bias_add", "conv2d", "elu", "embedding_lookup",
           "gelu",
           "l2_loss", "l2_normalize",
           "leaky_relu", "log_softmax", "max_pool2d", "moments", "relu", "relu6", "selu",
           "sigmoid", "sigmoid_cross_entropy_with_logits", "silu", "softmax",
           "softmax_cross_entropy_with_logits", "softplus", "softsign",
           "sparse_softmax_cross_entropy_with_logits", "swish", "tanh"]

import types as _types  # noqa: E402

experimental = _types.SimpleNamespace(stateless_dropout=stateless_dropout)
__all__ += ["dropout", "experimental"]
__all__ += ["avg_pool", "avg_pool1d", "conv1d", "conv2d_transpose", "depthwise_conv2d",
            "max_pool", "max_pool1d"]
__all__ += ["top_k"]


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None,
                         name=None):
    """tf.nn.compute_average_loss: the summed per-example losses over the global batch size
    (em.distribute's, which loads on first use, as em.distribute does)."""
    from ember.runtime.distribute.strategy import compute_average_loss as average
    return average(per_example_loss, sample_weight, global_batch_size)


__all__ += ["compute_average_loss"]
