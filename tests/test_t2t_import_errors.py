"""t2t-import's failures: one line naming what is wrong; no output, the T2T dir untouched.

Broken T2T directories are copies of the T2T-made post-norm train dir (tests/data/
t2t_reference) with a variable dropped, misshapen or added, or an hparam changed.
"""

import hashlib
import json
import os
import subprocess

import numpy as np
import pytest

from t2t_repro.commands.t2t_import import main
from tests.t2t_fixtures import POSTNORM_DIR, rewrite_t2t_checkpoint
from tests.tools import ROOT, tool_cmd

ENC = "transformer/body/encoder"


def snapshot(directory):
    return {
        name: (
            hashlib.sha256((directory / name).read_bytes()).hexdigest(),
            os.stat(directory / name).st_mtime_ns,
        )
        for name in sorted(os.listdir(directory))
    }


def run_import(capsys, t2t_dir, out, *flags):
    code = main([f"--t2t_dir={t2t_dir}", f"--output_dir={out}", *flags])
    return code, capsys.readouterr()


def assert_fails_cleanly(capsys, t2t_dir, out, *expected, flags=()):
    before = snapshot(t2t_dir)
    code, captured = run_import(capsys, t2t_dir, out, *flags)
    assert code == 1
    errors = [line for line in captured.err.splitlines() if line.startswith("t2t-import:")]
    assert len(errors) == 1 and errors[0].startswith("t2t-import: error: "), captured.err
    for text in expected:
        assert text in errors[0]
    assert not out.exists()
    assert not [n for n in os.listdir(out.parent) if ".importing-" in n]  # No temp leftovers.
    assert snapshot(t2t_dir) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    "drop, replace, expected",
    [
        ((f"{ENC}/layer_1/ffn/conv2/bias",), None, [f"{ENC}/layer_1/ffn/conv2/bias"]),
        (
            (),
            {
                f"{ENC}/layer_0/self_attention/multihead_attention/q/kernel": np.zeros(
                    [8, 6], np.float32
                )
            },
            [f"{ENC}/layer_0/self_attention/multihead_attention/q/kernel", "[8, 6]", "[8, 8]"],
        ),
        (
            (),
            {f"{ENC}/layer_2/ffn/conv1/kernel": np.zeros([8, 12], np.float32)},
            [f"{ENC}/layer_2/ffn/conv1/kernel", "maps to nothing"],
        ),
        (
            ("training/transformer/body/decoder/layer_0/ffn/conv1/bias/Adam_1",),
            None,
            ["training/transformer/body/decoder/layer_0/ffn/conv1/bias/Adam_1"],
        ),
        (
            ("transformer/symbol_modality_11_8/input_emb/weights_1",),
            None,
            ["transformer/symbol_modality_11_8/input_emb", "weights_0..N"],
        ),
        ((), {"training/beta1_power": np.float32(0.5)}, ["beta1_power", "--weights_only"]),
    ],
)
def test_broken_checkpoint_is_one_line_error(capsys, tmp_path, drop, replace, expected):
    t2t_dir = rewrite_t2t_checkpoint(POSTNORM_DIR, tmp_path / "t2t", drop, replace)
    assert_fails_cleanly(capsys, t2t_dir, tmp_path / "out", *expected)


@pytest.mark.parametrize(
    "name, value",
    [
        ("self_attention_type", "dot_product_relative_v2"),
        ("self_attention_type", "dot_product_relative"),  # with max_relative_position=0
        ("norm_type", "batch"),
        ("a_knob_from_the_future", 3),
    ],
)
def test_unsupported_t2t_hparam_is_named(capsys, tmp_path, name, value):
    import shutil

    t2t_dir = tmp_path / "t2t"
    shutil.copytree(POSTNORM_DIR, t2t_dir)
    values = json.loads((t2t_dir / "hparams.json").read_text())
    values[name] = value
    (t2t_dir / "hparams.json").write_text(json.dumps(values))
    assert_fails_cleanly(capsys, t2t_dir, tmp_path / "out", f"{name}={value!r}", "--ignore_hparams")
    if name == "a_knob_from_the_future":  # The user may accept it explicitly.
        code, _ = run_import(capsys, t2t_dir, tmp_path / "out", f"--ignore_hparams={name}")
        assert code == 0 and (tmp_path / "out" / "ckpt-1.index").exists()


def test_existing_output_dir_and_bad_vocab_are_refused(capsys, tmp_path):
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    code, captured = run_import(capsys, POSTNORM_DIR, existing)
    assert code == 1 and "already exists" in captured.err
    assert os.listdir(existing) == ["keep.txt"]
    vocab = tmp_path / "vocab.small.subwords"
    vocab.write_text("'<pad>'\n'<EOS>'\n'a_'\n")
    assert_fails_cleanly(
        capsys,
        POSTNORM_DIR,
        tmp_path / "out",
        "3 (inputs) / 3 (targets)",
        "11 / 13",
        flags=(f"--vocab={vocab}",),
    )


def test_weights_only_and_moved_dir(capsys, tmp_path):
    """A checkpoint file with another machine's absolute path still imports; --weights_only
    accepts an inconsistent Adam state and leaves the moments at zero."""
    t2t_dir = rewrite_t2t_checkpoint(
        POSTNORM_DIR, tmp_path / "t2t", (), {"training/beta1_power": np.float32(0.5)}
    )
    (t2t_dir / "checkpoint").write_text('model_checkpoint_path: "/cluster/run7/model.ckpt-1"\n')
    code, captured = run_import(capsys, t2t_dir, tmp_path / "out", "--weights_only")
    assert code == 0, captured.err
    assert "without Adam's moments" in captured.out


@pytest.mark.slow
def test_cli_prints_the_commands_that_use_the_import(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(
        [*tool_cmd("t2t-import"), f"--t2t_dir={POSTNORM_DIR}", f"--output_dir={out}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "tiny_unregistered_problem' is not registered here" in proc.stderr
    assert f"wrote {out}/ckpt-1 (step 1, with Adam's moments)" in proc.stdout
    assert (
        '--hparams_set=transformer_base_v1 --hparams="filter_size=12,hidden_size=8,'
        "num_heads=2,num_hidden_layers=2,shared_embedding_and_softmax_weights=False,"
        # T2T's embedding row blocks: stored, as T2T's Adafactor updates each on its own
        'symbol_modality_num_shards=3"'
    ) in proc.stdout
    assert sorted(os.listdir(out)) == [
        "checkpoint",
        "ckpt-1.data-00000-of-00001",
        "ckpt-1.index",
        "flags.txt",
        "hparams.json",
    ]


def test_printed_commands_carry_the_imports_usr_dir():
    """The decode and resume lines run as printed: a usr_dir's problem needs --t2t_usr_dir."""
    from t2t_repro.hparam import HParams
    from t2t_repro.t2t_import.hparams_map import ImportedHParams
    from t2t_repro.t2t_import.report import describe
    from t2t_repro.t2t_import.writer import ImportResult

    imported = ImportedHParams(HParams(hidden_size=8), "transformer_base", "", ())
    result = ImportResult("out/ckpt-1", 1, imported, "my_problem", True)
    lines = describe(result, "out", "data", False, usr_dir="~/my_usr_dir").splitlines()
    for line in lines[2:]:
        assert line.split()[1].startswith("t2t-") and "--t2t_usr_dir=~/my_usr_dir" in line
    assert "--t2t_usr_dir" not in describe(result, "out", "data", False)
