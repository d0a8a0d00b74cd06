"""Where a run trains, said in one line at start, and the accelerators it would miss.

Why: a GPU host whose CUDA libraries TensorFlow cannot load trains on the CPU without a word
(the quiet console hides TensorFlow's "Cannot dlopen some GPU libraries" line), and so does a
TPU VM. T2T logged its device placement (``tensor2tensor/utils/devices.py``,
``data_parallelism``); here the trainer prints the strategy, the replicas, their devices and
the precision; it warns when the machine has NVIDIA GPUs that TensorFlow does not see (and
says what to install) or when the precision does not fit the GPUs; and it refuses to start on
a TPU host (TPUStrategy is not supported) unless ``T2T_IGNORE_TPU=1`` says to use its CPU.

The machine is read from files and the environment only (``root`` and ``environ`` are
injectable), so the checks run in tests on any host.
"""

from __future__ import annotations

import glob
import importlib.util
import os
from collections.abc import Mapping

import tensorflow as tf

from t2t_repro.training.run_setup import TrainingError

IGNORE_TPU_ENV = "T2T_IGNORE_TPU"
# Environment variables set on Cloud TPU VMs and in TPU notebooks.
TPU_ENV = ("TPU_NAME", "TPU_ACCELERATOR_TYPE", "COLAB_TPU_ADDR")


def nvidia_gpus(root: str = "/") -> list[str]:
    """The NVIDIA GPUs the kernel driver exposes (``/proc/driver/nvidia/gpus/*``, else the
    ``/dev/nvidia<N>`` device files); empty without the NVIDIA driver."""
    found = sorted(glob.glob(os.path.join(root, "proc/driver/nvidia/gpus/*")))
    return found or sorted(glob.glob(os.path.join(root, "dev/nvidia[0-9]*")))


def tpu_evidence(
    root: str = "/", environ: Mapping[str, str] | None = None, has_libtpu: bool | None = None
) -> str | None:
    """What says this host has a TPU (a device file or an environment variable), or None.

    TPU VMs expose ``/dev/accel<N>`` (v2-v4) or VFIO devices with ``libtpu`` installed (v5e
    and later); ``/dev/vfio`` alone is any PCI pass-through, so it needs libtpu as well.
    """
    environ = os.environ if environ is None else environ
    accel = sorted(glob.glob(os.path.join(root, "dev/accel[0-9]*")))
    if accel:
        return accel[0]
    if has_libtpu is None:
        has_libtpu = importlib.util.find_spec("libtpu") is not None
    vfio = sorted(glob.glob(os.path.join(root, "dev/vfio/[0-9]*")))
    if vfio and has_libtpu:
        return f"{vfio[0]} with libtpu installed"
    for name in TPU_ENV:
        if environ.get(name):
            return f"{name}={environ[name]}"
    return None


def refuse_tpu(evidence: str | None, environ: Mapping[str, str] | None = None) -> None:
    environ = os.environ if environ is None else environ
    if evidence and environ.get(IGNORE_TPU_ENV, "") in ("", "0"):
        raise TrainingError(
            f"this host has a TPU ({evidence}), which t2t_repro cannot train on "
            "(TPUStrategy is not supported; see docs/distributed.md); use a GPU host, or set "
            f"{IGNORE_TPU_ENV}=1 to train on this host's CPU."
        )


def missing_gpu_warning(
    nvidia: list[str], visible_gpus: int, built_with_cuda: bool, environ: Mapping[str, str]
) -> str | None:
    """The warning for NVIDIA GPUs that TensorFlow does not use, or None."""
    if not nvidia or visible_gpus:
        return None
    if environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return None  # Hidden on purpose.
    found = f"this machine has {len(nvidia)} NVIDIA GPU(s) but TensorFlow sees none, "
    if not built_with_cuda:
        return (
            f"warning: {found}as this TensorFlow build has no CUDA support: "
            "pip install 'tensorflow[and-cuda]'; training runs on the CPU."
        )
    return (
        f"warning: {found}as it could not load the CUDA libraries (rerun with --verbose to "
        "see which): pip install 'tensorflow[and-cuda]' installs matching ones; training "
        "runs on the CPU."
    )


def precision_note(mixed_precision: str, capabilities: list[tuple[int, int]]) -> str | None:
    """A note when the GPUs' compute capabilities call for another precision, or None:
    bfloat16 is native from Ampere (8.0: A100, H100), float16 tensor cores from Volta (7.0:
    V100, T4); float32 leaves either unused."""
    if not capabilities:
        return None
    oldest = min(capabilities)
    version = ".".join(map(str, oldest))
    if mixed_precision == "bfloat16" and oldest < (8, 0):
        return (
            f"note: compute capability {version} GPUs (V100, T4 class) have no bfloat16 "
            "tensor cores; --mixed_precision=float16 (with loss scaling) is the fast one there."
        )
    if not mixed_precision and oldest >= (7, 0):
        fast = "bfloat16" if oldest >= (8, 0) else "float16"
        return (
            f"note: these GPUs (compute capability {version}) multiply in {fast} on tensor "
            f"cores; --mixed_precision={fast} would train faster (this run stays in float32)."
        )
    return None


def unused_gpus_note(visible: int, used: int) -> str | None:
    """The line for a run that leaves GPUs of its host idle, or None. T2T's --worker_gpu
    defaults to 1 (``utils/flags.py``): a T2T command line trains on one GPU of eight."""
    if visible <= used:
        return None
    return (
        f"note: this host has {visible} GPUs and the run trains on {used} (--worker_gpu={used}; "
        f"T2T's default is 1); --worker_gpu={visible} trains on all of them (batch_size is per "
        f"GPU: an update then sees {visible}x its tokens)."
    )


def gpu_capabilities() -> list[tuple[int, int]]:
    return [
        tuple(tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0)))
        for gpu in tf.config.list_physical_devices("GPU")
    ]


def short_device(name: str) -> str:
    """``/job:localhost/replica:0/task:0/device:GPU:1`` -> ``GPU:1``."""
    return name.rsplit("device:", 1)[-1]


def precision_name(mixed_precision: str, loss_scaling: bool = True) -> str:
    if mixed_precision == "float16":
        return f"mixed_float16 ({'loss scaling' if loss_scaling else 'no loss scaling'})"
    return f"mixed_{mixed_precision}" if mixed_precision else "float32"


def run_line(
    strategy: tf.distribute.Strategy, mixed_precision: str, xla: bool, loss_scaling: bool = True
) -> str:
    """E.g. ``training on 2 replicas: GPU:0, GPU:1 (MirroredStrategy); precision float32``."""
    replicas = strategy.num_replicas_in_sync
    try:
        devices, name = list(strategy.extended.worker_devices), strategy_name(strategy)
    except RuntimeError:  # The default strategy: TensorFlow's own placement, one device.
        gpus = tf.config.list_logical_devices("GPU")
        devices, name = [gpus[0].name if gpus else "CPU:0"], "no tf.distribute strategy"
    where = ", ".join(short_device(d) for d in devices)
    resolver = strategy.cluster_resolver
    cluster = resolver.cluster_spec().as_dict() if resolver is not None else {}
    workers = len(cluster.get("chief", [])) + len(cluster.get("worker", []))
    count = f"{replicas} replica{'s' if replicas > 1 else ''}"
    if workers > 1:
        count += f" over {workers} workers"
        where += f" on this {resolver.task_type} {resolver.task_id}"
    return (
        f"training on {count}: {where} ({name}); "
        f"precision {precision_name(mixed_precision, loss_scaling)}{', XLA' if xla else ''}"
    )


def _devices_here(strategy: tf.distribute.Strategy) -> list[str]:
    """The strategy's devices on this host (none named for the default strategy)."""
    try:
        return list(strategy.extended.worker_devices)
    except RuntimeError:  # the default strategy
        return []


def strategy_name(strategy: tf.distribute.Strategy) -> str:
    """The public name (MultiWorkerMirroredStrategy's class is CollectiveAllReduceStrategy)."""
    for name in ("MultiWorkerMirroredStrategy", "MirroredStrategy", "OneDeviceStrategy"):
        if isinstance(strategy, getattr(tf.distribute, name)):
            return name
    return type(strategy).__name__


def announce(
    strategy: tf.distribute.Strategy,
    mixed_precision: str,
    xla: bool = False,
    loss_scaling: bool = True,
) -> None:
    """The trainer's one call: refuses a TPU host, warns about unused NVIDIA GPUs (and a
    precision that does not fit the GPUs), and prints the line saying where the run trains
    (``loss_scaling``: False for T2T's float16 activations without a loss scaler)."""
    refuse_tpu(tpu_evidence())
    warning = missing_gpu_warning(
        nvidia_gpus(),
        len(tf.config.list_physical_devices("GPU")),
        tf.test.is_built_with_cuda(),
        os.environ,
    )
    used = sum("GPU" in short_device(d) for d in _devices_here(strategy))
    unused = unused_gpus_note(len(tf.config.list_physical_devices("GPU")), used)
    for line in (warning, unused, precision_note(mixed_precision, gpu_capabilities())):
        if line:
            print(line, flush=True)
    print(run_line(strategy, mixed_precision, xla, loss_scaling), flush=True)
