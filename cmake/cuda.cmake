# CUDA backend: being written
