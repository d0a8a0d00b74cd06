"""t2t-avg-all: the average of known weights is exact, and the result loads and decodes."""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.checkpoints.averaging import average_checkpoints
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.loading import restore_model
from tests.grappler import grappler_off_env
from tests.model_utils import build_model, shared_toy_data
from tests.shared_build import build_once
from tests.tools import PLUMBING_MODEL, run_tool

# The averaging reads every variable alike whatever the model: width 32, one decoder layer
# and no encoder layer (PLUMBING_MODEL), 24 weights to write, read and decode with, not
# transformer_tiny's 66 of width 128.


def _train_dir_with_known_checkpoints(path, values=(1.0, 2.0, 6.0)):
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=30)
    (path / "hparams.json").write_text(model.hparams.to_json())
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), str(path), max_to_keep=10, checkpoint_name="ckpt"
    )
    for step, value in zip((100, 200, 300), values, strict=True):
        for w in model.weights:
            w.assign(tf.fill(w.shape, value))
        manager.save(checkpoint_number=step)


@pytest.fixture(scope="module")
def known():
    """A train dir whose ckpt-100, -200 and -300 hold every weight at 1, 2 and 6, made once
    for the run (tests/shared_build.py): the tests only read it, each averaging into its own
    tmp_path."""
    return build_once("averaging_known_checkpoints", _train_dir_with_known_checkpoints)


def test_average_of_known_weights_is_exact(known, tmp_path):
    path, _ = average_checkpoints(str(known), str(tmp_path / "avg"), n=2, log=lambda m: None)
    assert path.endswith("ckpt-300")
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=30)
    restore_model(model, str(tmp_path / "avg"))
    for w in model.weights:
        np.testing.assert_array_equal(w.numpy(), np.full(w.shape, 4.0, np.float32))  # (2+6)/2


def test_fewer_checkpoints_than_n_warns_and_averages_all(known, tmp_path):
    messages = []
    average_checkpoints(str(known), str(tmp_path / "avg"), n=20, log=messages.append)
    assert any("only 3 checkpoint" in m for m in messages)
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=30)
    restore_model(model, str(tmp_path / "avg"))
    assert model.weights[0].numpy().flat[0] == pytest.approx(3.0)  # (1+2+6)/3


@pytest.mark.slow
def test_max_step_averages_the_newest_at_or_before_it(known, tmp_path):
    out = run_tool(
        "t2t-avg-all", f"--model_dir={known}", f"--output_dir={tmp_path / 'avg'}", "--n=2",
        "--max_step=250",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "averaging ckpt-100, ckpt-200" in out.stderr
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=30)
    restore_model(model, str(tmp_path / "avg"))
    assert model.weights[0].numpy().flat[0] == pytest.approx(1.5)  # (1+2)/2, not 6
    with pytest.raises(CheckpointError, match="no checkpoint at or before step 50"):
        average_checkpoints(str(known), str(tmp_path / "avg2"), n=2, max_step=50)


def test_empty_dir_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="No checkpoints"):
        average_checkpoints(str(tmp_path), str(tmp_path / "avg"))


@pytest.mark.slow
def test_cli_average_then_decode(tmp_path):
    from t2t_repro import registry

    data = shared_toy_data()  # read only: the decoder reads its vocabulary
    vocab = registry.problem("translate_toy").vocab_sizes(str(data))[0]
    train = tmp_path / "train"
    train.mkdir()
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=vocab)
    (train / "hparams.json").write_text(model.hparams.to_json())
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), str(train), 5, checkpoint_name="ckpt"
    )
    manager.save(checkpoint_number=1)
    manager.save(checkpoint_number=2)
    avg = ("t2t-avg-all", f"--model_dir={train}", f"--output_dir={train / 'avg'}", "--n=2")
    out = run_tool(*avg)
    assert out.returncode == 0 and "wrote 1 average(s)" in out.stdout, out.stderr
    again = run_tool(*avg)  # a rerun keeps it
    kept = f"{train / 'avg' / 'ckpt-2'} is already the average of ckpt-1, ckpt-2; kept"
    assert again.returncode == 0 and kept in again.stderr, again
    src = tmp_path / "src.txt"
    src.write_text("the big dog sees a cat .\n\nmany cats run .\n")
    out = run_tool(
        "t2t-decoder",
        "--problem=translate_toy",
        f"--data_dir={data}",
        f"--output_dir={train}",
        f"--checkpoint_path={train / 'avg'}",
        f"--decode_from_file={src}",
        f"--decode_to_file={tmp_path / 'out'}",
        "--decode_hparams=beam_size=2,extra_length=5",
        env=grappler_off_env(),  # the decode checks lines, not T2T's numbers: tests/grappler.py
    )
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "out").read_text().split("\n")[:-1]
    assert len(lines) == 3  # one output a line, the blank one decoded from EOS alone (T2T's)
