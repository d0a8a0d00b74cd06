"""t2t-trainer through its real CLI, plus distributed/accumulation equivalence."""

import glob
import json
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.hparam import join_overrides
from tests.cluster_run import free_ports
from tests.grappler import grappler_off_env
from tests.tools import (
    PYTHON,
    ROOT,
    SMALL_BATCH_SHUFFLE,
    TINY_PLUMBING,
    TINY_TRAINING,
    USER_ENV,
    ZERO_LAYERS,
    assert_quiet,
    tool_cmd,
)

TINY = TINY_TRAINING
# The suite's TF_CPP_MIN_LOG_LEVEL (conftest); forked runs without Grappler (tests/grappler.py):
# they check signals, messages, refusals and precisions, each against a run of their own.
ENV = {**grappler_off_env(), "PYTHONUNBUFFERED": "1"}
# The killed/resumed test compares two runs bit for bit: forked runs without Grappler repeat
# bitwise with the suite's one intra-op thread (tests/conftest.py; tests/grappler.py says why).
RESUME_ENV = {**ENV, "TF_NUM_INTRAOP_THREADS": "1"}


@pytest.fixture(scope="module")
def data_dir():
    from tests.model_utils import shared_toy_data

    return shared_toy_data()


def trainer_cmd(data_dir, output_dir, *extra):
    return tool_cmd(
        "t2t-trainer",
        "--problem=translate_toy",
        "--hparams_set=transformer_quickstart",
        f"--data_dir={data_dir}",
        f"--output_dir={output_dir}",
        *extra,
    )


def run_trainer(data_dir, output_dir, *extra, env=ENV):
    return subprocess.run(
        trainer_cmd(data_dir, output_dir, *extra),
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def event_tags(directory):
    tags = set()
    for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            tags.update(v.tag for v in event.summary.value)
    return tags


@pytest.mark.slow
def test_cli_learns_toy_problem_and_writes_events(data_dir, tmp_path):
    out = run_trainer(
        data_dir,
        tmp_path / "train",
        "--train_steps=300",
        # Half transformer_quickstart's width (~3.5x less compute a step), half its batch
        # (1,024 tokens: ~1/4 less CPU for the whole test), one layer of its two and no
        # dropout (~30% less CPU again; without dropout the one layer learns as fast as two
        # with it). At step 300 for seeds 1-6 (AMD EPYC Zen 4): eval loss 0.22-0.29, at most
        # 0.75 of the bound, accuracy 0.94-0.96, BLEU 79-91 on 32 sentences (two layers with
        # dropout, seeds 1-3: 0.15-0.19, 0.96-0.98, 83-92); 16 batches to shuffle, not 512
        # (~90,000 examples).
        f"--hparams=hidden_size=64,filter_size=256,batch_size=1024,{SMALL_BATCH_SHUFFLE},"
        "num_hidden_layers=1,layer_prepostprocess_dropout=0",
        "--local_eval_frequency=300",  # the one eval asserted (periodic: test_t2t_walkthrough)
        # BLEU of 32 dev decodes, not the default 64: one batch of the dev metric's beam search
        # (DevBleu decodes 32 a batch), not two (~2 of the test's ~29 core-s then); the bound
        # is 50.
        "--eval_decode_examples=32",
        "--log_step_count_steps=100",
        "--random_seed=1",  # Reproducible: unseeded, the last eval sometimes caught a loss spike.
        env={**USER_ENV, "PYTHONUNBUFFERED": "1"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert_quiet(out.stderr)  # Training, eval, BLEU decodes: no TensorFlow start-up lines.
    losses = [
        float(line.split("loss ")[1].split(" ")[0])
        for line in out.stdout.splitlines()
        if line.startswith("step ")
    ]
    final_eval = [line for line in out.stdout.splitlines() if line.startswith("eval at step 300")][
        -1
    ]
    eval_loss = float(final_eval.split("loss ")[1].split(",")[0])
    accuracy = float(final_eval.split("accuracy ")[1].split(",")[0])
    bleu = float(final_eval.split("BLEU ")[1].split(" ")[0])
    assert bleu > 50, out.stdout  # Real decodes of 32 dev sentences; the toy task is easy.
    assert eval_loss < 0.15 * losses[0] and accuracy > 0.9, out.stdout
    assert sorted(glob.glob(str(tmp_path / "train" / "ckpt-*.index")))
    assert {
        "loss",
        "global_step/sec",  # T2T's Estimator's rate (StepCounterHook)
        "learning_rate",
        "grad_norm",
        "tokens_per_sec",
        "examples_per_sec",
        "input_stats/targets_nonpadding_fraction",
        "hparams",
    } <= event_tags(tmp_path / "train")
    assert {  # T2T's tags of its metrics (utils/metrics.py); the loss and our own as named
        "loss",
        "metrics-translate_toy/targets/accuracy",
        "metrics-translate_toy/targets/accuracy_per_sequence",
        "metrics-translate_toy/targets/neg_log_perplexity",
        "perplexity",
        "bleu",
        "attention/encoder_self_layer0",  # the last layer's heat maps
        "attention/decoder_self_layer0",
        "attention/encdec_layer0",
    } <= event_tags(tmp_path / "train" / "eval")
    saved = json.loads((tmp_path / "train" / "hparams.json").read_text())
    assert saved["hidden_size"] == 64 and saved["input_vocab_size"] > 0


@pytest.mark.slow
def test_mirrored_and_accumulated_updates_equal_single_device():
    """Also: one all-reduce per update; each replica its own dropout masks (#27). (The check's
    run serves test_optimizers_training's mirrored test too.)"""
    from tests.distributed_check import results

    r = results()
    assert r["loss_mirrored"] == pytest.approx(r["loss_1"], rel=1e-5)
    assert r["loss_accumulated"] == pytest.approx(r["loss_1"], rel=1e-5)
    assert r["max_diff_mirrored"] < 1e-3 * r["max_update"]  # the update is ~1e-5
    assert r["max_diff_accumulated"] < 1e-3 * r["max_update"]
    # --xla on the two replicas (merge_call all-reduces: only the passes compiled)
    assert r["loss_mirrored_xla"] == pytest.approx(r["loss_1_layer"], rel=1e-5)
    assert r["max_diff_mirrored_xla"] < 1e-3 * r["max_update_1_layer"]
    assert r["feed_same_as_distributed"] and r["feed_resumes_exactly"]
    # Gradients and logged sums cross the devices once (T2T: one all-reduce per update);
    # the optimizer does not reduce again, also with loss scaling.
    assert r["all_reduces_per_update"] == r["all_reduces_per_update_loss_scaled"] == 1
    assert r["loss_mirrored_loss_scaled"] == pytest.approx(r["loss_1"], rel=1e-5)
    # Clipping acts on the global gradient once (it used to act on each replica's share).
    assert r["max_diff_mirrored_loss_scaled_clipped"] < 1e-3 * r["max_update_clipped"]
    assert r["max_update_clipped"] < 0.5 * r["max_update"]  # the clip did act
    # Dropout: replica 0 draws the one-device masks, replica 1 its own (about half differ),
    # a fresh one at every step, and the same again from a restored generator state.
    assert r["replica0_is_one_device"] and r["replica1_steps_differ"]
    assert all(0.45 < d < 0.55 for d in r["masks_differ"]), r["masks_differ"]
    assert all(0.45 < k < 0.55 for k in r["replica1_kept"]), r["replica1_kept"]
    assert r["masks_resume_exactly"]


def checkpoint_values(path):
    reader = tf.train.load_checkpoint(path)
    # The input iterator's state is a variant (not readable as an array): the weights, Adam
    # slots and RNG states that follow from it are compared instead.
    return {
        k: reader.get_tensor(k)
        for k in reader.get_variable_to_shape_map()
        if "save_counter" not in k and "OBJECT_GRAPH" not in k and "ITERATOR_STATE" not in k
    }


@pytest.mark.slow
def test_killed_and_resumed_run_equals_uninterrupted(data_dir, tmp_path):
    flags = (
        f"--hparams={TINY}",
        "--train_steps=60",
        "--local_eval_frequency=20",
        "--steps_per_loop=5",
        "--schedule=train",
        "--random_seed=7",
    )
    whole = run_trainer(data_dir, tmp_path / "whole", *flags, env=RESUME_ENV)
    assert whole.returncode == 0, whole.stderr[-3000:]
    proc = subprocess.Popen(
        trainer_cmd(data_dir, tmp_path / "killed", *flags),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=RESUME_ENV,
    )
    deadline = time.time() + 300
    while not (tmp_path / "killed" / "ckpt-20.index").exists() and time.time() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The unlucky case: the state file is garbled and a save left its temp dir behind. The
    # run must resume from the newest complete checkpoint on disk, never from step 0.
    killed = tmp_path / "killed"
    (killed / "checkpoint").write_bytes(b'model_checkpoint_path: "ckpt-\xff\x00 {{')
    (killed / "ckpt-999_temp").mkdir()
    newest = max(int(p.name[5:-6]) for p in killed.glob("ckpt-*.index"))
    resumed = run_trainer(data_dir, killed, *flags, env=RESUME_ENV)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"newest complete checkpoint on disk, ckpt-{newest}" in resumed.stdout
    assert f"resumed from {killed / f'ckpt-{newest}'} at step {newest}" in resumed.stdout
    assert not (killed / "ckpt-999_temp").exists() and (killed / "checkpoint.unreadable").exists()
    assert "skipping" not in resumed.stdout  # The input position came from the checkpoint.
    a = checkpoint_values(str(tmp_path / "whole" / "ckpt-60"))
    b = checkpoint_values(str(tmp_path / "killed" / "ckpt-60"))
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    # A rerun reads the saved hparams.json, then --hparams (T2T's create_hparams): the change
    # is named and hparams.json rewritten (folded in from its own test, which trained a run
    # first only to have one; at --train_steps, nothing more is trained).
    whole_dir = tmp_path / "whole"
    again = run_trainer(
        data_dir,
        whole_dir,
        f"--hparams={join_overrides(TINY, 'learning_rate_constant=0.5')}",
        *flags[1:],
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"hparams saved in {whole_dir}: learning_rate_constant" in again.stdout, again.stdout
    assert json.loads((whole_dir / "hparams.json").read_text())["learning_rate_constant"] == 0.5
    # (a shape the checkpoint does not have: test_checkpoint_safety.py, in this process)


def test_a_cluster_checkpoint_is_refused_on_one_host_before_writing(data_dir, tmp_path):
    """A two-worker chief's checkpoint (built here directly: it holds both workers' input
    positions) cannot place one host's input; one line says what to do, nothing is written."""
    from t2t_repro.checkpoints.errors import CheckpointError
    from t2t_repro.training.loop.input_feed import WorkerPositions
    from t2t_repro.training.trainer import Trainer, TrainerConfig

    out = tmp_path / "train"
    cfg = TrainerConfig(
        problem="translate_toy",
        hparams_set="transformer_quickstart",
        data_dir=str(data_dir),
        output_dir=str(out),
        hparams=TINY,
        schedule="train",
        train_steps=1,
    )
    chief = Trainer(cfg)
    chief.ckpt.restore_latest()
    setattr(chief.ckpt.checkpoint, WorkerPositions.KEY, tf.Variable(["", ""]))
    chief.ckpt.save(0)
    before = sorted(os.listdir(out))
    with pytest.raises(
        CheckpointError, match="saved by a cluster of 2 workers and this run is on one host"
    ) as e:
        Trainer(cfg).run()
    assert "TF_CONFIG of 2 workers" in str(e.value) and "\n" not in str(e.value)
    assert sorted(os.listdir(out)) == before


@pytest.mark.slow
def test_nan_loss_stops_with_clear_message(data_dir, tmp_path):
    out = run_trainer(
        data_dir,
        tmp_path / "nan",
        f"--hparams={TINY_PLUMBING},learning_rate_schedule=constant,learning_rate_constant=1e30",
        "--train_steps=40",
        "--steps_per_loop=5",
        "--schedule=train",
    )
    assert out.returncode == 1
    assert "Loss became NaN/Inf at step" in out.stderr and "Traceback" not in out.stderr
    assert not glob.glob(str(tmp_path / "nan" / "ckpt-*.index"))


@pytest.mark.slow
def test_ids_past_the_vocabulary_stop_with_clear_message(data_dir, tmp_path):
    """Shards written with a larger vocabulary than the one in --data_dir now: one line."""
    shutil.copytree(data_dir, tmp_path / "data")
    [vocab] = (tmp_path / "data").glob("vocab.*")
    vocab.write_text("".join(vocab.read_text().splitlines(keepends=True)[:12]))  # 12 ids left
    out = run_trainer(tmp_path / "data", tmp_path / "out", f"--hparams={TINY_PLUMBING}")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "which this model has no row for (its vocabulary or classes: 12)" in out.stderr


@pytest.mark.slow
def test_sigterm_saves_and_exits_cleanly(data_dir, tmp_path):
    proc = subprocess.Popen(
        trainer_cmd(
            data_dir,
            tmp_path / "term",
            f"--hparams={TINY_PLUMBING}",
            "--train_steps=100000",
            "--steps_per_loop=5",
            "--log_step_count_steps=5",
            "--schedule=train",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    line = ""
    while not line.startswith("step "):
        line = proc.stdout.readline()
        assert line or proc.poll() is None, proc.stderr.read()[-3000:]
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=300)
    assert proc.returncode == 143  # --signal_exit_code's default: a restart policy reruns it
    assert "received SIGTERM: saved" in rest
    assert glob.glob(str(tmp_path / "term" / "ckpt-*.index"))


# Adam on the encoder-decoder (the one multi-replica update of it checked against one
# device; tests/distributed_check.py's are the decoder alone); T2T's Adafactor with its weight
# and gradient noise (t2t_repro/optimizers/) on the decoder alone with no layer, as
# distributed_check's optimizer_ratios (the embedding's row blocks and the final layer norm).
LOOPBACK_CASES = [
    "encoder_decoder:",
    f"decoder:,{ZERO_LAYERS},optimizer=Adafactor,weight_decay=0.01,weight_noise=1.0,"
    "grad_noise_scale=0.001",
]


def _loopback_cluster(path):
    """Two workers over loopback and a one-device run, each running every case of
    LOOPBACK_CASES in turn (one cluster for both cases: its start-up and processes once)."""
    workers = [f"localhost:{p}" for p in free_ports(2)]
    procs = []
    for index in range(2):
        env = dict(
            ENV,
            TF_CONFIG=json.dumps(
                {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
            ),
        )
        procs.append(
            subprocess.Popen(
                [*PYTHON, "-m", "tests.multiworker_check", "worker", str(path / f"w{index}")]
                + LOOPBACK_CASES,
                cwd=ROOT,
                env=env,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
    single = subprocess.run(
        [*PYTHON, "-m", "tests.multiworker_check", "single", str(path / "single")] + LOOPBACK_CASES,
        cwd=ROOT,
        env=ENV,
        text=True,
        capture_output=True,
        timeout=1200,
    )
    outputs = [p.communicate(timeout=1200) for p in procs]
    errors = [err[-3000:] for p, (_, err) in zip(procs, outputs, strict=True) if p.returncode]
    if single.returncode or errors:
        raise RuntimeError(f"tests.multiworker_check failed:\n{single.stderr[-3000:]}{errors}")
    losses = {
        name: json.loads(out.strip().splitlines()[-1])["losses"]
        for name, out in [("w0", outputs[0][0]), ("w1", outputs[1][0]), ("single", single.stdout)]
    }
    (path / "losses.json").write_text(json.dumps(losses))


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(LOOPBACK_CASES)), ids=LOOPBACK_CASES)
def test_multi_worker_update_over_loopback_equals_single_device(case):
    from tests.shared_build import build_once

    path = build_once("multiworker_loopback", _loopback_cluster)
    losses = json.loads((path / "losses.json").read_text())
    assert losses["w0"][case] == losses["w1"][case]  # Both hold the all-reduced sums (3 steps).
    assert losses["w0"][case] == pytest.approx(losses["single"][case], rel=1e-5)
    load = lambda name: list(np.load(path / f"{name}-{case}.npz").values())  # noqa: E731
    w0, w1, ws = load("w0"), load("w1"), load("single")
    from tests.distributed_check import diff, initial_weights

    assert diff(w0, w1) == 0.0
    assert diff(w0, ws) < 1e-3 * diff(ws, initial_weights(ws))


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["bfloat16", "float16"])
def test_mixed_precision_trains(data_dir, tmp_path, precision):
    out = run_trainer(
        data_dir,
        tmp_path / precision,
        f"--hparams={TINY}",
        # Two logged losses 10 steps apart (seeds 1-3: 4.24-4.60, then 3.05-3.11 in both
        # precisions); 20 steps more, to log 20 apart, cost 0.4-2 core-s a run.
        "--train_steps=20",
        "--schedule=train",
        "--log_step_count_steps=10",
        f"--mixed_precision={precision}",
        "--random_seed=3",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    losses = [
        float(line.split("loss ")[1].split(" ")[0])
        for line in out.stdout.splitlines()
        if line.startswith("step ")
    ]
    assert len(losses) == 2 and np.isfinite(losses).all() and losses[1] < losses[0], out.stdout
    # Variables stay float32 (mixed precision computes in low precision, stores in float32).
    reader = tf.train.load_checkpoint(str(tmp_path / precision / "ckpt-20"))
    dtypes = reader.get_variable_to_dtype_map()
    assert any("embedding" in k.lower() for k in dtypes)
    assert all(d == tf.float32 for k, d in dtypes.items() if "embedding" in k.lower()), dtypes


@pytest.mark.parametrize(
    "flag, expected",
    [
        ("--hparams_set=transformer_quickstrat", "Unknown hparams 'transformer_quickstrat'"),
        ("--problem=translate_toyy", "Unknown problem 'translate_toyy'"),
        ("--hparams=hidden_sizee=8", "hidden_sizee"),
        ("--model=transformr", "Unknown model 'transformr'"),
    ],
)
def test_typos_are_reported_before_the_empty_data_dir(tmp_path, capsys, flag, expected):
    from t2t_repro.commands import trainer

    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [
        "--problem=translate_toy",
        "--hparams_set=transformer_quickstart",
        f"--data_dir={empty}",
        f"--output_dir={tmp_path / 'train'}",
        flag,
    ]
    assert trainer.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("t2t-trainer: error: ") and expected in err, err
    assert not (tmp_path / "train").exists()
    # With the typo fixed, the same command reaches the data directory and says what is missing.
    assert trainer.main(argv[:-1]) == 1
    assert "t2t-datagen" in capsys.readouterr().err
