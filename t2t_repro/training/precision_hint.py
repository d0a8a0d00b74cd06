"""A one-line hint when an fp32 run starts on a CPU whose bf16 matmuls are much faster.

Why: on a CPU with AMX or AVX512-BF16, ``--mixed_precision=bfloat16`` trains 1.5-3x faster,
and a user who does not know it leaves that speed unused. The trainer never switches
precision itself (the numbers would change); it measures a tiny matmul in both dtypes
(well under a second) and says how much faster bf16 is and which flag turns it on. It stays
quiet on CPUs without bf16 instructions (bf16 is emulated there, and slower), on GPUs (which
have their own mixed-precision story) and when a precision was already chosen.
"""

from __future__ import annotations

import time

import tensorflow as tf

# /proc/cpuinfo flags of the x86 instructions that multiply bf16 in hardware.
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")
# Below this speed-up the hint is not worth a line (the loss curve still moves a little).
WORTH_SAYING = 1.3
PROBE_SIZE = 512


def cpu_flags(cpuinfo_path: str = "/proc/cpuinfo") -> set[str]:
    """The CPU's feature flags (empty when the file is absent or unreadable, e.g. not Linux)."""
    try:
        with open(cpuinfo_path) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def bf16_instructions(flags: set[str]) -> list[str]:
    """Which of the bf16 matmul instructions the CPU has (empty: bf16 is emulated)."""
    return [flag for flag in BF16_CPU_FLAGS if flag in flags]


def matmul_seconds(dtype: tf.DType, n: int = PROBE_SIZE, repeats: int = 5) -> float:
    """Best time of an [n, n] @ [n, n] matmul in ``dtype`` (after one untimed warm-up)."""
    a = tf.cast(tf.random.stateless_uniform([n, n], seed=[1, 2]), dtype)
    b = tf.cast(tf.random.stateless_uniform([n, n], seed=[3, 4]), dtype)
    tf.matmul(a, b).numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        tf.matmul(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return best


def bf16_speedup(fp32_seconds: float, bf16_seconds: float) -> float:
    return fp32_seconds / bf16_seconds if bf16_seconds > 0 else 0.0


def hint_line(speedup: float) -> str | None:
    """The line to print for a measured bf16/fp32 matmul speed-up, or None if not worth it."""
    if speedup < WORTH_SAYING:
        return None
    return (
        f"note: this CPU multiplies bfloat16 matrices {speedup:.1f}x faster than float32; "
        "--mixed_precision=bfloat16 would train faster (this run stays in float32)."
    )


def bf16_hint(mixed_precision: str, flags: set[str] | None = None) -> str | None:
    """The hint for a run about to start, or None: only for an fp32 run on a CPU-only host
    whose CPU has bf16 instructions and whose bf16 matmul is clearly faster."""
    if mixed_precision or tf.config.list_physical_devices("GPU"):
        return None
    if not bf16_instructions(cpu_flags() if flags is None else flags):
        return None
    return hint_line(bf16_speedup(matmul_seconds(tf.float32), matmul_seconds(tf.bfloat16)))


def print_bf16_hint(mixed_precision: str) -> None:
    """Prints the hint when there is one (the trainer's one-line call)."""
    line = bf16_hint(mixed_precision)
    if line:
        print(line, flush=True)
