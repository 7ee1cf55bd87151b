"""`em.keras.activations`: Keras's activation functions and `get` / `serialize` /
`deserialize` (the code is in `ember.frontend.training.activations`; this module only
re-exports)."""

from ember.frontend.training.activations import (deserialize, elu, exponential, gelu, get,
                                                 hard_sigmoid, leaky_relu, linear, mish, relu,
                                                 relu6, selu, serialize, sigmoid, silu,
                                                 softmax, softplus, softsign, swish, tanh)

__all__ = ["deserialize", "elu", "exponential", "gelu", "get", "hard_sigmoid", "leaky_relu",
           "linear", "mish", "relu", "relu6", "selu", "serialize", "sigmoid", "silu",
           "softmax", "softplus", "softsign", "swish", "tanh"]
