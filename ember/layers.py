"""`em.layers`: Keras-shaped layers that build their weights on the first call (the code is
in `ember.frontend.training`; this module only re-exports)."""

from ember.frontend.training.layers_conv import Conv2D, MaxPool2D, MaxPooling2D
from ember.frontend.training.layers_core import (Dense, Dropout, Embedding, Flatten, Layer,
                                                 Sequential)
from ember.frontend.training.layers_norm import BatchNormalization, LayerNormalization

__all__ = ["BatchNormalization", "Conv2D", "Dense", "Dropout", "Embedding", "Flatten", "Layer",
           "LayerNormalization", "MaxPool2D", "MaxPooling2D", "Sequential"]
