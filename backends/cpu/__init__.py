"""The CPU backend: ember IR -> linalg -> bufferized -> LLVM dialect -> LLVM IR -> native."""
