//! grus-cuda-limiter: an LD_PRELOAD library that intercepts the CUDA driver API in a container
//! holding a `grus.io/gpu-milli` share and enforces the share's memory and compute limits.
//! Not built yet: see the GPU-sharing issue.
