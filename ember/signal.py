"""`em.signal`: Fourier transforms with tf.signal's names and signatures (the functions are
in `ember.frontend.complex_ops`; this module only re-exports). Compiled, each is a direct
DFT (O(n^2) per transform), not a fast FFT."""

from ember.frontend.complex_ops import fft, ifft, irfft, rfft

__all__ = ["fft", "ifft", "irfft", "rfft"]
