"""tensor2tensor 1.15's README walkthrough, flag for flag, on local data: t2t-datagen,
t2t-trainer, t2t-decoder (--decode_hparams, --decode_from_file, --decode_to_file), t2t-bleu.
The toy problem, a tiny model through --hparams and a few steps keep it cheap; each tool runs
in-process through its ``main(argv)``."""

import os

import pytest

from t2t_repro.commands import bleu, datagen, decoder, t2t_eval, trainer
from tests.tools import NO_DROPOUT, NO_ENCODER_LAYER, SMALL_BATCH_SHUFFLE

PROBLEM, MODEL, HPARAMS = "translate_toy", "transformer", "transformer_tiny"
TINY = (
    f"hidden_size=16,filter_size=32,num_heads=2,{NO_ENCODER_LAYER},batch_size=256,max_length=24,"
    f"{NO_DROPOUT},{SMALL_BATCH_SHUFFLE}"
)
BEAM_SIZE, ALPHA = 2, 0.6


# The walkthrough checks the tools' flags, files and lines.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.mark.slow
def loss_steps(event_dir):
    """The steps of the ``loss`` scalars in ``event_dir``'s event files, in order."""
    return [step for step, _ in scalars(event_dir, "loss")]


def scalars(event_dir, tag):
    """(step, value) of the ``tag`` scalars in ``event_dir``'s event files, in order."""
    import tensorflow as tf

    found = []
    for path in sorted(event_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            found += [(event.step, v.simple_value) for v in event.summary.value if v.tag == tag]
    return found


def test_t2t_readme_walkthrough(tmp_path, capsys):
    data_dir, tmp_dir, train_dir = (
        tmp_path / "t2t_data",
        tmp_path / "t2t_datagen",
        tmp_path / "train",
    )
    data_dir.mkdir()
    common = [f"--data_dir={data_dir}", f"--problem={PROBLEM}"]
    model = [f"--model={MODEL}", f"--hparams_set={HPARAMS}", f"--output_dir={train_dir}"]

    # t2t-datagen --data_dir=$DATA_DIR --tmp_dir=$TMP_DIR --problem=$PROBLEM
    assert datagen.main([*common, f"--tmp_dir={tmp_dir}", "--max_cases=1000", "--noprogress"]) == 0

    # t2t-trainer --data_dir --problem --model --hparams_set --output_dir, with T2T's default
    # schedule: an eval after the first checkpoint, the next throttled (600 s), one at the end.
    argv = [*common, *model, f"--hparams={TINY}", "--train_steps=6", "--local_eval_frequency=2"]
    more = ["--schedule=continuous_train_and_eval", "--eval_steps=1", "--eval_decode_examples=0"]
    assert trainer.main([*argv, *more, "--no-attention_images", "--random_seed=1"]) == 0
    out = capsys.readouterr().out
    evals = [line.split(":")[0] for line in out.splitlines() if line.startswith("eval at step")]
    assert evals == ["eval at step 2", "eval at step 6"], out
    flags = (train_dir / "flags.txt").read_text()
    assert "--schedule=continuous_train_and_eval\n" in flags
    # T2T's event dirs: Estimator's train_and_evaluate writes eval/, then T2T's evaluate()
    # once more at the end eval_eval/ (the same evaluation here, written to both)
    assert (loss_steps(train_dir / "eval"), loss_steps(train_dir / "eval_eval")) == ([2, 6], [6])
    dev_loss = out.split("eval at step 6: loss ")[1].split(",")[0]

    # continuous_eval stops once no new checkpoint came for --eval_timeout_mins (0 here: after
    # evaluating the newest); --eval_use_test_set evaluates the test split, not dev.
    watch = [*common, *model, "--train_steps=1000", "--eval_steps=1", "--eval_decode_examples=0"]
    watch += ["--schedule=continuous_eval", "--eval_timeout_mins=0", "--no-attention_images"]
    assert trainer.main([*watch, "--eval_use_test_set"]) == 0
    test_eval = capsys.readouterr().out
    assert test_eval.count("eval at step 6: loss ") == 1, test_eval
    assert test_eval.split("eval at step 6: loss ")[1].split(",")[0] != dev_loss
    assert loss_steps(train_dir / "eval_eval") == [6, 6]  # Estimator.evaluate(name="eval")
    # t2t-eval (T2T's bin/t2t_eval.py, trainer flags, no schedule): the same on dev, by
    # Estimator.evaluate() without a name: into eval/
    assert t2t_eval.main([w for w in watch if not w.startswith("--schedule")]) == 0
    assert capsys.readouterr().out.count("eval at step 6: loss ") == 1
    assert (loss_steps(train_dir / "eval"), loss_steps(train_dir / "eval_eval")) == (
        [2, 6, 6],
        [6, 6],
    )

    # --hparams over the saved hparams.json (T2T's create_hparams): targets cut to 2 tokens,
    # another eval loss
    cut = [*common, *model, "--schedule=evaluate", "--eval_steps=1"]
    cut += ["--hparams=max_target_seq_length=2", "--eval_decode_examples=0"]
    assert trainer.main([*cut, "--no-attention_images"]) == 0
    cut_eval = capsys.readouterr().out
    assert cut_eval.split("eval at step 6: loss ")[1].split(",")[0] != dev_loss, cut_eval

    # --schedule=decode: the dev split with the newest checkpoint, as t2t-decoder writes it.
    sched = [*common, *model, f"--tmp_dir={tmp_dir}", "--schedule=decode"]
    sched_hp = "--decode_hparams=beam_size=1,num_samples=3,extra_length=5"
    assert trainer.main([*sched, sched_hp, f"--decode_to_file={tmp_path / 'sched'}"]) == 0
    name = f"sched.{MODEL}.{HPARAMS}.{PROBLEM}.beam1.alpha0.6.decodes"
    assert len((tmp_path / name).read_text().splitlines()) == 3

    # train_eval_and_decode: T2T's one round of --train_steps=2 more from step 6, then an eval
    # and the dev decodes (no --decode_to_file: decode_dev.txt in the output dir, as
    # t2t-decoder's).
    resume = [*common, *model, f"--hparams={TINY}", "--train_steps=2", "--local_eval_frequency=2"]
    resume += ["--schedule=train_eval_and_decode", f"--tmp_dir={tmp_dir}", "--eval_steps=1"]
    resume += ["--eval_decode_examples=0", "--no-attention_images", sched_hp]
    (tmp_path / "three_refs").write_text("a\nb\nc\n")  # num_samples=3 lines decoded
    capsys.readouterr()
    assert trainer.main([*resume, f"--decode_reference={tmp_path / 'three_refs'}"]) == 0
    out = capsys.readouterr().out
    assert "eval at step 8" in out and "decoded dev at step 8" in out, out
    # T2T's decode hook: train_eval_and_decode decodes the "eval" split: decode_eval/
    [(step, value)] = scalars(train_dir / "decode_eval", "BLEU")
    assert step == 8 and f"decode_dev.txt: BLEU = {value:6.2f}" in out, out
    assert out.count("eval at step") == 1 and "training finished at step 8" in out, out
    assert len((train_dir / "decode_dev.txt").read_text().splitlines()) == 3
    (train_dir / "decode_dev.txt").unlink()

    # t2t-decoder ... --decode_hparams="beam_size=$BEAM_SIZE,alpha=$ALPHA"
    #     --decode_from_file=$DECODE_FILE --decode_to_file=translation.en
    decode_file = data_dir / "decode_this.txt"
    decode_file.write_text("the dog sees a cat .\nmany cats run .\n")
    translation = tmp_path / "translation.en"
    dec = [*common, *model, f"--decode_hparams=beam_size={BEAM_SIZE},alpha={ALPHA}"]
    to_file = [f"--decode_from_file={decode_file}", f"--decode_to_file={translation}"]
    assert decoder.main([*dec, *to_file, "--keep_timestamp"]) == 0
    assert len(translation.read_text().splitlines()) == 2
    index = (train_dir / "ckpt-8.index").stat().st_mtime
    assert abs(os.path.getmtime(translation) - index) < 1e-3  # T2T's --keep_timestamp

    # t2t-bleu --translation=translation.en --reference=ref-translation.de
    reference = tmp_path / "ref-translation.de"
    reference.write_text("the dog sees a cat .\nmany cats run .\n")
    capsys.readouterr()
    assert bleu.main([f"--translation={translation}", f"--reference={reference}"]) == 0
    lines = capsys.readouterr().out.splitlines()  # T2T's two lines (bin/t2t_bleu.py)
    assert [line.split(" = ")[0] for line in lines] == ["BLEU_uncased", "BLEU_cased"], lines

    # Decoding the dev split with --decode_to_file writes T2T's three files there (T2T's
    # decode_from_dataset), here limited to T2T's num_samples; --decode_reference adds BLEU.
    prefix = tmp_path / "dev_decodes"
    split = [*common, *model, f"--tmp_dir={tmp_dir}", f"--decode_to_file={prefix}"]
    hp = f"--decode_hparams=beam_size={BEAM_SIZE},alpha={ALPHA},num_samples=5,extra_length=5"
    stem = f"{prefix}.{MODEL}.{HPARAMS}.{PROBLEM}.beam{BEAM_SIZE}.alpha{ALPHA}"
    with_reference = [*split, hp, f"--decode_reference={tmp_path / 'dev_ref'}"]
    assert decoder.main(with_reference) == 1
    assert "dev_ref" in capsys.readouterr().err  # a missing reference: one line, before work
    # Any 5 lines serve as the reference: only that BLEU is printed and written is checked
    # (one decode of the split, not one to make the reference and one to score it).
    (tmp_path / "dev_ref").write_text("a\nb\nc\nd\ne\n")
    assert decoder.main(with_reference) == 0
    printed = capsys.readouterr().out
    assert f"{stem}.decodes: BLEU = " in printed
    # T2T's decode hook writes it as the scalar BLEU at the newest checkpoint's step, under
    # <model_dir>/<summaries_log_dir> (run_postdecode_hooks, compute_bleu_summaries)
    [(step, value)] = scalars(train_dir / "decode", "BLEU")
    assert step == 8 and f"BLEU = {value:6.2f}" in printed
    lines = {
        ext: open(f"{stem}.{ext}").read().splitlines() for ext in ("decodes", "targets", "inputs")
    }
    assert all(len(v) == 5 for v in lines.values()), lines
    assert lines["inputs"][0] != lines["targets"][0]  # sources and references, not copies
    assert not (train_dir / "decode_dev.txt").exists()
