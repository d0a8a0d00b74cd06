"""t2t-trainer --warm_start_from: a new run starts from another run's model weights at step 0
with a new optimizer; mismatches are refused before anything is written (#34)."""

import os
import shutil

import numpy as np
import pytest

from t2t_repro import registry
from t2t_repro.checkpoints.errors import CheckpointError
from tests.model_utils import shared_toy_data
from tests.shared_build import build_once
from tests.t2t_fixtures import POSTNORM_DIR
from tests.tools import TINY_PLUMBING

TINY = TINY_PLUMBING
# The fine-tuning run's own dropout and warm-up, each name once (T2T's HParams.parse refuses a
# name given twice in one string).
FINETUNE = TINY.replace("warmup_steps=50", "warmup_steps=10").replace(
    "layer_prepostprocess_dropout=0.0", "layer_prepostprocess_dropout=0.3"
)


def config(data_dir, output_dir, **overrides):
    from t2t_repro.training.config import TrainerConfig

    settings = dict(
        problem="translate_toy",
        hparams_set="transformer_quickstart",
        data_dir=str(data_dir),
        output_dir=str(output_dir),
        hparams=TINY,
        train_steps=20,
        local_eval_frequency=10,
        steps_per_loop=10,
        eval_steps=4,
        attention_images=False,
        eval_decode_examples=0,
        random_seed=3,
    )
    return TrainerConfig(**{**settings, **overrides})


# The runs below check weights, steps, files and messages.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.fixture(scope="module")
def source():
    """translate_toy data and a 20-step source run (checkpoints at steps 10 and 20), both
    made once for the test run (the tests only read them: tests/shared_build.py)."""
    from t2t_repro.training.trainer import Trainer

    data = shared_toy_data()
    src = build_once(
        "warm_start_source", lambda path: Trainer(config(data, path, schedule="train")).run()
    )
    return data, src


def copy_run(src, dest):
    shutil.copytree(src, dest)
    return dest


def model_weights(model):
    return [w.numpy() for w in model.trainable_weights]


@pytest.mark.slow
def test_a_warm_start_has_the_sources_weights_and_eval_loss_at_step_0(source, tmp_path, capsys):
    from t2t_repro.checkpoints.averaging import average_checkpoints
    from t2t_repro.checkpoints.loading import load_trained_model
    from t2t_repro.training import warm_start
    from t2t_repro.training.trainer import Trainer

    data, src = source
    # Evaluated in a copy: the shared source is only read (an evaluation writes its events).
    source_eval = Trainer(config(data, copy_run(src, tmp_path / "src"), schedule="evaluate")).run()
    assert source_eval["step"] == 20
    out = tmp_path / "finetune"
    # Other training hparams (dropout, schedule) are the new run's to choose.
    run = config(
        data, out, warm_start_from=str(src), train_steps=3, local_eval_frequency=3,
        hparams=FINETUNE,
    )  # fmt: skip
    trainer = Trainer(run)
    assert trainer.start() is None
    assert (
        f"warm start from {src / 'ckpt-20'}: its model weights, step 0" in capsys.readouterr().out
    )
    assert trainer.step == 0
    slots = [v for v in trainer.optimizer.variables if v is not trainer.optimizer.iterations]
    assert slots and not any(np.any(v.numpy()) for v in slots)  # fresh Adam moments
    assert trainer.evaluate()["loss"] == source_eval["loss"]  # the same weights, the same dev data
    result = trainer.train()
    assert trainer.step == 3 and result["checkpoint"] == str(out / "ckpt-3")
    assert f"--warm_start_from={src / 'ckpt-20'}\n" in (out / "flags.txt").read_text()
    # Rerunning the command resumes from the run's own checkpoint; the warm start is ignored.
    again = Trainer(run)
    assert again.start() == str(out / "ckpt-3") and again.step == 3
    assert f"--warm_start_from={src} is ignored: the run resumes from" in capsys.readouterr().out

    # A ckpt-N prefix and a t2t-avg-all directory are sources too.
    avg, _ = average_checkpoints(str(src), str(tmp_path / "avg"), n=2, log=lambda _: None)
    for source_path, expected in [(src / "ckpt-10", src / "ckpt-10"), (tmp_path / "avg", avg)]:
        model = load_trained_model(str(src), restore=False).model
        warm_start.warm_start(model, warm_start.source_prefix(str(source_path)))
        loaded = load_trained_model(str(src), checkpoint_path=str(expected)).model
        for ours, theirs in zip(model_weights(model), model_weights(loaded), strict=True):
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.slow
def test_mismatches_are_refused_in_one_line_before_writing(source, tmp_path):
    from t2t_repro.checkpoints.loading import load_trained_model, saved_hparams
    from t2t_repro.training import warm_start
    from t2t_repro.training.trainer import Trainer
    from tests.t2t_fixtures import postnorm_import

    data, src = source
    out = tmp_path / "new"
    smaller = TINY.replace("hidden_size=32", "hidden_size=16")
    with pytest.raises(CheckpointError) as e:  # read from the source's hparams.json
        Trainer(config(data, out, warm_start_from=str(src), hparams=smaller)).start()
    assert not out.exists()
    assert str(e.value) == (
        f"--warm_start_from={src / 'ckpt-20'}: its model has hidden_size=32, this run's has "
        "hidden_size=16; a warm start needs the same vocabulary and model sizes (use the "
        "source's hparams set and its vocabulary)."
    )

    def refused(call, *args):
        with pytest.raises(CheckpointError) as e:
            call(*args)
        message = str(e.value)
        assert message.startswith("--warm_start_from") and "\n" not in message, message
        return message

    # Without an hparams.json beside it, the variables' shapes say it.
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in os.listdir(src):
        if name.startswith("ckpt-20."):
            shutil.copy(src / name, bare / name)
    wider = load_trained_model(str(src), hparams_overrides="filter_size=48", restore=False).model
    message = refused(warm_start.warm_start, wider, str(bare / "ckpt-20"))
    assert "incompatible tensor with shape (32, 64)" in message and "(32, 48)" in message
    # The same vocabulary size but other subwords (the source's data_dir from its flags.txt).
    problem = registry.problem("translate_toy")
    other = tmp_path / "other_data"
    other.mkdir()
    vocab = problem.vocab_path(str(data))
    lines = open(vocab, encoding="utf-8").read().splitlines(keepends=True)
    lines[-2], lines[-1] = lines[-1], lines[-2]
    (other / os.path.basename(vocab)).write_text("".join(lines), encoding="utf-8")
    run = tmp_path / "other_run"
    shutil.copytree(src, run)
    flags = (run / "flags.txt").read_text().replace(f"--data_dir={data}", f"--data_dir={other}")
    (run / "flags.txt").write_text(flags)
    hp = saved_hparams(str(src))
    message = refused(warm_start.check_compatible, str(run / "ckpt-20"), hp, problem, str(data))
    assert f"its vocabulary {other / os.path.basename(vocab)} differs from this run's" in message
    warm_start.check_compatible(str(src / "ckpt-20"), hp, problem, str(data))  # the same: fine
    # A tensor2tensor directory: convert it first; its t2t-import has other vocabulary sizes.
    message = refused(warm_start.source_prefix, str(POSTNORM_DIR))
    assert f"t2t-import --t2t_dir={POSTNORM_DIR}" in message
    imported, _ = postnorm_import()  # the run's one import of it (read only)
    prefix = warm_start.source_prefix(str(imported))
    message = refused(warm_start.check_compatible, prefix, hp, problem, str(data))
    assert "its model has input_vocab_size=11, this run's has input_vocab_size=" in message
