"""The dense matmul peak of this machine in one dtype, through TensorFlow (oneDNN and XLA).

The reference of every MFU figure: the best GFLOP/s of large square ``tf.matmul``s in the
dtype the benchmark trains in (fp32 peak for fp32 runs, bf16 peak for bf16 runs), measured
in the same process so that the machine's drift hits both alike.
"""

from __future__ import annotations

import time

import tensorflow as tf

SIZES = (2048, 4096)


def matmul_gflops(n: int, dtype: tf.DType, xla: bool, repeats: int = 4) -> float:
    """Best GFLOP/s of an [n, n] @ [n, n] matmul over ``repeats`` calls (after a warm-up)."""
    a = tf.cast(tf.random.stateless_normal([n, n], seed=[1, 2]), dtype)
    b = tf.cast(tf.random.stateless_normal([n, n], seed=[3, 4]), dtype)
    f = tf.function(tf.matmul, jit_compile=xla)
    f(a, b)[0, 0].numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        f(a, b)[0, 0].numpy()  # Reading one element waits for the product.
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def matmul_peak(dtype: tf.DType, sizes: tuple[int, ...] = SIZES) -> dict:
    """``{"oneDNN": {n: GFLOP/s}, "XLA": {...}, "peak_gflops": best of all}`` for ``dtype``."""
    by_mode = {
        mode: {str(n): round(matmul_gflops(n, dtype, xla), 1) for n in sizes}
        for mode, xla in (("oneDNN", False), ("XLA", True))
    }
    peak = max(g for per_size in by_mode.values() for g in per_size.values())
    return {"dtype": dtype.name, **by_mode, "peak_gflops": peak}
