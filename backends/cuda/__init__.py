"""The CUDA backend: PTX for NVIDIA GPUs (backend.py's stages), run through the CUDA
driver (runtime.py), and the same mapped loop nests run on the CPU (emulated.py)."""
