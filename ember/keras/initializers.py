"""`em.keras.initializers`: Keras's weight initializers (`GlorotUniform`, `HeNormal`,
`Orthogonal`, ...; also by their snake-case names) and `get` / `serialize` / `deserialize`
(the code is in `ember.frontend.training.initializers`; this module only re-exports)."""

from ember.frontend.training.initializers import (Constant, GlorotNormal, GlorotUniform,
                                                  HeNormal, HeUniform, Identity, Initializer,
                                                  LecunNormal, LecunUniform, Ones,
                                                  Orthogonal, RandomNormal, RandomUniform,
                                                  TruncatedNormal, VarianceScaling, Zeros,
                                                  deserialize, get, serialize)

# Keras's lower-case aliases of the classes
constant, ones, zeros, orthogonal, identity = Constant, Ones, Zeros, Orthogonal, Identity
glorot_normal, glorot_uniform, he_normal, he_uniform = (GlorotNormal, GlorotUniform,
                                                        HeNormal, HeUniform)
lecun_normal, lecun_uniform, variance_scaling = LecunNormal, LecunUniform, VarianceScaling
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform", "Identity",
           "Initializer", "LecunNormal", "LecunUniform", "Ones", "Orthogonal", "RandomNormal",
           "RandomUniform", "TruncatedNormal", "VarianceScaling", "Zeros", "deserialize",
           "get", "serialize"]
