"""Saying where a run trains (t2t_repro/training/cluster/devices.py), on a fake machine: a fake root
directory for /proc and /dev, and an injected environment."""

import pytest
import tensorflow as tf

from t2t_repro.training.cluster import devices
from t2t_repro.training.run_setup import TrainingError


def touch(root, path):
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text("")


def test_nvidia_gpus_from_the_driver_or_the_device_files(tmp_path):
    assert devices.nvidia_gpus(str(tmp_path)) == []
    touch(tmp_path, "dev/nvidia0")
    touch(tmp_path, "dev/nvidiactl")  # not a GPU
    assert [p.rsplit("/", 1)[1] for p in devices.nvidia_gpus(str(tmp_path))] == ["nvidia0"]
    (tmp_path / "proc/driver/nvidia/gpus/0000:00:04.0").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/gpus/0000:00:05.0").mkdir(parents=True)
    assert len(devices.nvidia_gpus(str(tmp_path))) == 2


def test_warning_when_tensorflow_sees_none_of_the_nvidia_gpus():
    gpus = ["/proc/driver/nvidia/gpus/0000:00:04.0"]
    no_cuda = devices.missing_gpu_warning(gpus, 0, built_with_cuda=False, environ={})
    assert no_cuda.startswith("warning: this machine has 1 NVIDIA GPU(s) but TensorFlow sees")
    assert "no CUDA support: pip install 'tensorflow[and-cuda]'" in no_cuda
    cannot_load = devices.missing_gpu_warning(gpus, 0, built_with_cuda=True, environ={})
    assert "could not load the CUDA libraries" in cannot_load and "--verbose" in cannot_load
    assert "\n" not in no_cuda + cannot_load
    assert devices.missing_gpu_warning(gpus, 1, True, {}) is None  # TensorFlow sees it
    assert devices.missing_gpu_warning([], 0, False, {}) is None  # no NVIDIA GPU
    hidden = {"CUDA_VISIBLE_DEVICES": ""}
    assert devices.missing_gpu_warning(gpus, 0, True, hidden) is None  # hidden on purpose


def test_tpu_hosts_are_refused_in_one_line(tmp_path):
    assert devices.tpu_evidence(str(tmp_path), {}, has_libtpu=True) is None
    touch(tmp_path, "dev/vfio/0")  # any PCI pass-through: a TPU only with libtpu
    assert devices.tpu_evidence(str(tmp_path), {}, has_libtpu=False) is None
    assert "libtpu" in devices.tpu_evidence(str(tmp_path), {}, has_libtpu=True)
    assert devices.tpu_evidence(str(tmp_path), {"TPU_NAME": "my-tpu"}, False) == "TPU_NAME=my-tpu"
    touch(tmp_path, "dev/accel0")
    evidence = devices.tpu_evidence(str(tmp_path), {}, has_libtpu=False)
    assert evidence.endswith("dev/accel0")
    with pytest.raises(TrainingError, match="has a TPU .*T2T_IGNORE_TPU=1") as e:
        devices.refuse_tpu(evidence, environ={})
    assert "\n" not in str(e.value)
    devices.refuse_tpu(evidence, environ={"T2T_IGNORE_TPU": "1"})  # train on its CPU
    devices.refuse_tpu(None, environ={})


def test_precision_notes_follow_the_gpus_compute_capability():
    assert "float16" in devices.precision_note("bfloat16", [(7, 0)])  # V100
    assert "bfloat16 would" in devices.precision_note("", [(8, 0), (9, 0)])
    assert "float16 would" in devices.precision_note("", [(7, 5)])  # T4
    assert devices.precision_note("bfloat16", [(8, 0)]) is None
    assert devices.precision_note("float16", [(7, 0)]) is None
    assert devices.precision_note("", []) is None  # CPU: precision_hint's business
    assert devices.precision_note("", [(6, 1)]) is None  # no tensor cores


def test_run_line_names_strategy_replicas_devices_and_precision(capsys):
    line = devices.run_line(tf.distribute.get_strategy(), "", xla=False)
    gpu = bool(tf.config.list_logical_devices("GPU"))
    device = "GPU:0" if gpu else "CPU:0"
    assert line == (
        f"training on 1 replica: {device} (no tf.distribute strategy); precision float32"
    )
    one = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert devices.run_line(one, "float16", xla=True) == (
        "training on 1 replica: CPU:0 (OneDeviceStrategy); "
        "precision mixed_float16 (loss scaling), XLA"
    )
    # T2T's float16 activations with an empty loss scaler train without one
    assert devices.run_line(one, "float16", False, loss_scaling=False).endswith(
        "precision mixed_float16 (no loss scaling)"
    )
    devices.announce(one, "bfloat16")
    assert capsys.readouterr().out.splitlines()[-1].endswith("precision mixed_bfloat16")


def test_announce_prints_the_warning(monkeypatch, capsys):
    monkeypatch.setattr(devices, "nvidia_gpus", lambda: ["/dev/nvidia0"])
    monkeypatch.setattr(devices, "tpu_evidence", lambda: None)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    devices.announce(tf.distribute.OneDeviceStrategy("/cpu:0"), "")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("warning: this machine has 1 NVIDIA GPU(s)")
    assert lines[1].startswith("training on 1 replica: CPU:0")
