"""T2T's other optimizers in ``t2t-trainer`` on the toy problem: train, resume, decode,
average, warm-start.

``transformer_base_multistep8`` (MultistepAdam over the project's gradient accumulation) and a
usr_dir set with ``optimizer = "Adafactor"`` and a cosine-decay schedule (its values are the
schedule's own test's; here only that it runs), each with the tiny model. The update rules
themselves are checked against T2T in ``test_t2t_optimizers.py``.
"""

from __future__ import annotations

import pytest

from t2t_repro import registry
from tests.tools import TINY_PLUMBING
from tests.usr_dir_registry import restored_registry

# The runs check that T2T's optimizers train, resume, decode, average, warm-start; their update
# rules are checked against T2T elsewhere.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.fixture(scope="module")
def data_dir():
    from tests.model_utils import shared_toy_data

    return shared_toy_data()


@pytest.fixture(autouse=True)
def float32_policy_after():
    """The bfloat16 warm start sets Keras' global policy in this process: put it back."""
    import keras

    previous = keras.mixed_precision.global_policy()
    yield
    keras.mixed_precision.set_global_policy(previous)


@pytest.fixture
def restore_registry():
    yield from restored_registry({"adafactor_usr_dir"})


def _train_resume_decode(data_dir, out, tmp_path, *flags, batches_per_update=1):
    """``batches_per_update``: multistep_adam's, whose steps count batches as in T2T."""
    from t2t_repro.commands import decoder, trainer

    k = batches_per_update

    common = [
        "--problem=translate_toy",
        f"--data_dir={data_dir}",
        f"--output_dir={out}",
        "--schedule=train",
        "--random_seed=1",
        "--eval_decode_examples=0",
        "--no-attention_images",
        *flags,
    ]
    assert trainer.main([*common, f"--train_steps={2 * k}"]) == 0
    assert (out / f"ckpt-{2 * k}.index").exists()
    assert trainer.main([*common, f"--train_steps={3 * k}"]) == 0  # resumes from ckpt-2k
    assert (out / f"ckpt-{3 * k}.index").exists()
    src = tmp_path / "src"
    src.write_text("a b c\n", encoding="utf-8")
    decode = [
        "--problem=translate_toy",
        f"--data_dir={data_dir}",
        f"--output_dir={out}",
        "--decode_hparams=beam_size=2,extra_length=4",
        f"--decode_from_file={src}",
        f"--decode_to_file={tmp_path / 'decoded'}",
    ]
    assert decoder.main(decode) == 0
    assert len((tmp_path / "decoded").read_text().split("\n")) == 2
    # t2t-avg-all reads the run's checkpoints (model weights only, whatever the optimizer's
    # slots), and a new run warm-starts from the run with a fresh optimizer
    from t2t_repro.checkpoints.averaging import average_checkpoints

    average_checkpoints(str(out), str(tmp_path / "avg"), n=2, log=lambda _: None)
    assert (tmp_path / "avg" / f"ckpt-{3 * k}.index").exists()
    warm = [
        f if not f.startswith("--output_dir=") else f"--output_dir={tmp_path / 'warm'}"
        for f in common
    ]
    # (and under bfloat16 mixed precision: the optimizer sees float32 weights and gradients)
    run = [*warm, f"--train_steps={k}", f"--warm_start_from={out}", "--mixed_precision=bfloat16"]
    assert trainer.main(run) == 0
    assert (tmp_path / "warm" / f"ckpt-{k}.index").exists()


@pytest.mark.slow
def test_transformer_base_multistep8_trains_resumes_and_decodes(data_dir, tmp_path):
    hp = registry.hparams("transformer_base_multistep8")
    assert (hp.optimizer, hp.optimizer_multistep_accumulate_steps) == ("multistep_adam", 8)
    _train_resume_decode(
        data_dir,
        tmp_path / "train",
        tmp_path,
        "--hparams_set=transformer_base_multistep8",
        f"--hparams={TINY_PLUMBING},optimizer_multistep_accumulate_steps=2",
        batches_per_update=2,
    )


@pytest.mark.slow
def test_usr_dir_adafactor_set_trains_resumes_and_decodes(data_dir, tmp_path, restore_registry):
    usr_dir = tmp_path / "adafactor_usr_dir"
    usr_dir.mkdir()
    (usr_dir / "__init__.py").write_text(
        "from tensor2tensor.models import transformer\n"
        "from tensor2tensor.utils import registry\n\n\n"
        "@registry.register_hparams\n"
        "def transformer_adafactor_cos():\n"
        "    hparams = transformer.transformer_base()\n"
        '    hparams.optimizer = "Adafactor"\n'
        '    hparams.learning_rate_schedule = "constant*linear_warmup*cosdecay"\n'
        "    return hparams\n",
        encoding="utf-8",
    )
    _train_resume_decode(
        data_dir,
        tmp_path / "train",
        tmp_path,
        f"--t2t_usr_dir={usr_dir}",
        "--hparams_set=transformer_adafactor_cos",
        # Two embedding row blocks, not transformer_base's 16: Adafactor still updates the
        # embedding block by block (its block slots saved, resumed, warm-started past), with
        # 2 of the 16 blocks' ops in each of the three traced training loops (~0.3 of each
        # loop's ~1.4 CPU-s trace, AMD EPYC Zen 3). The block rule is checked against T2T's
        # updates in test_t2t_optimizers.py (3 uneven blocks).
        f"--hparams={TINY_PLUMBING},symbol_modality_num_shards=2",
    )


@pytest.mark.slow
def test_adafactor_and_multistep_adam_under_mirrored_strategy():
    """2 mirrored logical CPUs (also loss-scaled) give the one-device update, with T2T's
    weight decay and clipping: Adafactor's factored slots, and multistep_adam's micro-steps
    each reduced across the replicas on its own (tests/distributed_check.py,
    optimizer_ratios)."""
    from tests.distributed_check import results

    ratios = results()["optimizer_ratios"]  # a run shared with test_trainer's mirrored test
    assert set(ratios) == {"Adafactor", "multistep_adam"}
    for name, (mirrored, loss_scaled) in ratios.items():  # as test_trainer's mirrored check
        assert mirrored < 1e-3 and loss_scaled < 1e-3, (name, mirrored, loss_scaled)


def test_an_optimizer_t2t_has_but_not_this_project_is_refused_before_any_file(
    data_dir, tmp_path, capsys
):
    from t2t_repro.commands import trainer

    out = tmp_path / "train"
    flags = [
        "--problem=translate_toy",
        f"--data_dir={data_dir}",
        f"--output_dir={out}",
        "--hparams_set=transformer_base",
        f"--hparams={TINY_PLUMBING},optimizer=YellowFin",
        "--train_steps=1",
    ]
    assert trainer.main(flags) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert "YellowFin" in err[-1] and "utils/yellowfin.py" in err[-1], err
    assert not out.exists()
