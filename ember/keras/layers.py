"""`em.keras.layers`: the layers of `em.layers` and Keras's preprocessing layers (the code is
in `ember.frontend.training`; this module only re-exports)."""

from ember.layers import (BatchNormalization, Conv2D, Dense, Dropout, Embedding, Flatten,
                          Layer, LayerNormalization, MaxPool2D, MaxPooling2D)
from ember.frontend.training.keras_lookup import IntegerLookup, StringLookup
from ember.frontend.training.keras_preprocessing import Normalization, Rescaling
from ember.frontend.training.layers_lambda import Lambda
from ember.frontend.training.layers_reshaping import (ELU, LeakyReLU, Permute, ReLU,
                                                      RepeatVector, Softmax, UpSampling2D,
                                                      ZeroPadding2D)
from ember.frontend.training.layers_extra import (Activation, Add, AveragePooling2D, AvgPool2D,
                                                  Concatenate, Conv1D, GlobalAveragePooling2D,
                                                  GlobalAvgPool2D, GlobalMaxPool2D,
                                                  GlobalMaxPooling2D, Reshape)

__all__ = ["BatchNormalization", "Conv2D", "Dense", "Dropout", "Embedding", "Flatten",
           "IntegerLookup", "Layer", "LayerNormalization", "MaxPool2D", "MaxPooling2D",
           "Normalization", "Rescaling", "StringLookup"]
__all__ += ["Activation", "Add", "AveragePooling2D", "AvgPool2D", "Concatenate", "Conv1D",
            "GlobalAveragePooling2D", "GlobalAvgPool2D", "GlobalMaxPool2D", "GlobalMaxPooling2D",
            "Reshape"]
__all__ += ["Lambda"]
__all__ += ["ELU", "LeakyReLU", "Permute", "ReLU", "RepeatVector", "Softmax", "UpSampling2D",
            "ZeroPadding2D"]


def __getattr__(name: str):
    from ember.runtime.keras.unavailable import MESSAGES, unavailable
    if name in ("Input", "InputLayer"):
        raise unavailable("em.keras.layers.", name)
    raise AttributeError(f"module 'ember.keras.layers' has no attribute {name!r}")
