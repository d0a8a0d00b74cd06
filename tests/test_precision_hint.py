"""The trainer's one-line bf16 hint: when it is printed, and that it never changes precision."""

import keras
import pytest
import tensorflow as tf

from t2t_repro.hparam import HParams
from t2t_repro.training import precision_hint
from t2t_repro.training.config import TrainerConfig
from t2t_repro.training.run_setup import setup_precision

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni
"""


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    flags = precision_hint.cpu_flags(str(path))
    assert {"avx2", "avx512_bf16"} <= flags
    assert precision_hint.bf16_instructions(flags) == ["avx512_bf16"]
    assert precision_hint.bf16_instructions({"avx2", "avx512f"}) == []
    assert precision_hint.cpu_flags(str(tmp_path / "absent")) == set()


def test_the_line_says_how_much_faster_and_the_flag():
    line = precision_hint.hint_line(precision_hint.bf16_speedup(0.02, 0.008))
    assert "2.5x faster" in line and "--mixed_precision=bfloat16" in line
    assert "\n" not in line
    assert precision_hint.hint_line(precision_hint.bf16_speedup(0.01, 0.009)) is None


def _timings(monkeypatch, fp32_s, bf16_s):
    seconds = {tf.float32: fp32_s, tf.bfloat16: bf16_s}
    monkeypatch.setattr(precision_hint, "matmul_seconds", lambda dtype: seconds[dtype])


def test_decision_from_given_timings(monkeypatch):
    _timings(monkeypatch, 0.03, 0.01)
    assert "3.0x faster" in precision_hint.bf16_hint("", {"amx_bf16"})
    # Quiet: a precision already chosen, no bf16 instructions (emulated), too small a gain.
    assert precision_hint.bf16_hint("bfloat16", {"amx_bf16"}) is None
    assert precision_hint.bf16_hint("float16", {"amx_bf16"}) is None
    assert precision_hint.bf16_hint("", {"avx2", "avx512f"}) is None
    _timings(monkeypatch, 0.011, 0.01)
    assert precision_hint.bf16_hint("", {"avx512_bf16"}) is None


def test_quiet_on_a_gpu_host(monkeypatch):
    _timings(monkeypatch, 0.03, 0.01)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: ["GPU:0"])
    assert precision_hint.bf16_hint("", {"amx_bf16"}) is None


def test_the_real_probe_is_quick_and_measures_both_dtypes():
    fp32 = precision_hint.matmul_seconds(tf.float32, n=128, repeats=1)
    bf16 = precision_hint.matmul_seconds(tf.bfloat16, n=128, repeats=1)
    assert 0 < fp32 < 1 and 0 < bf16 < 1


@pytest.mark.parametrize(
    "mixed_precision, cpu, shown",
    [("", {"avx512_bf16"}, True), ("", {"avx2"}, False), ("bfloat16", {"avx512_bf16"}, False)],
)
def test_trainer_setup_prints_one_line_and_keeps_the_precision(
    monkeypatch, capsys, tmp_path, mixed_precision, cpu, shown
):
    _timings(monkeypatch, 0.02, 0.01)
    monkeypatch.setattr(precision_hint, "cpu_flags", lambda: cpu)
    cfg = TrainerConfig(
        problem="translate_toy",
        hparams_set="transformer_tiny",
        data_dir=str(tmp_path),
        output_dir=str(tmp_path),
        mixed_precision=mixed_precision,
    )
    try:
        setup_precision(cfg, HParams(activation_dtype="float32"))
        lines = capsys.readouterr().out.splitlines()
        assert keras.mixed_precision.global_policy().name == (
            f"mixed_{mixed_precision}" if mixed_precision else "float32"
        )
    finally:
        keras.mixed_precision.set_global_policy("float32")
    hints = [line for line in lines if "--mixed_precision=bfloat16" in line]
    assert len(hints) == (1 if shown else 0), lines
    assert not shown or "2.0x faster" in hints[0]
