"""Ahead-of-time compilation as the runtime sees it: Functions and ConcreteFunctions in, an
artifact folder out (compile.py); signatures written as text (signature.py). The code
generation is backends/cpu/aot; the loader, ember/aot_loader.py, needs neither."""
