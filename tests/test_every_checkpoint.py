"""Every checkpoint evaluated, as T2T users do (#35): t2t-translate-all, t2t-bleu
--translations_dir, t2t-avg-all's sliding window, and t2t-decoder's --keep_timestamp and
--decode_shards. Untrained tiny models, in-process main(argv) calls."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.checkpoints.averaging import average_checkpoints, average_sliding_windows
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.loading import restore_model
from t2t_repro.commands import avg_all, bleu, decoder, translate_all
from t2t_repro.metrics.bleu import t2t_bleu
from t2t_repro.step_files import StepFile, follow_steps
from tests.model_utils import build_model, toy_checkpoint_dir
from tests.tools import TINY_MODEL

# batch_size=1: every decode below runs batches of one line, one shape, so each loaded model
# traces its search once (batches of 2 and 1 traced it twice, ~0.6 core-s a trace), and a
# shard's lines are decoded alone as the whole file's are. One shape also needs one length
# bucket (decoding/search.py, LENGTH_BUCKETS): the sources are 21, 19 and 24 subword ids with
# EOS, all in the bucket of 24 (lines of 21, 13 and 28 ids, in three buckets, made each load
# trace up to three searches: the test traced 12, now 5, one for each of its five loads).
DECODE = "beam_size=2,extra_length=4,batch_size=1"
SOURCE = ["the dog sees a cat .", "the big cat runs .", "many dogs see the cat ."]
REFERENCE = [
    "der hund sieht eine katze .",
    "die grosse katze rennt .",
    "viele hunde sehen die katze .",
]


# The tools' flags, files and per-step lines are checked here.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """translate_toy data and a train dir with three checkpoints of differently seeded
    untrained models (steps 10, 20, 30), a flags.txt, a source and a reference file."""
    root = toy_checkpoint_dir(
        tmp_path_factory.mktemp("every"),
        step=10,
        seed=1,
        size=TINY_MODEL,  # as its models below
    )
    train = root / "train"
    vocab = registry.problem("translate_toy").vocab_sizes(str(root / "data"))[0]
    for step, seed in ((20, 3), (30, 5)):
        keras.utils.set_random_seed(seed)
        model = build_model("transformer_tiny", f"{TINY_MODEL},max_length=12", vocab_size=vocab)
        tf.train.CheckpointManager(
            tf.train.Checkpoint(model=model), str(train), 5, checkpoint_name="ckpt"
        ).save(checkpoint_number=step)
    for i, step in enumerate((10, 20, 30)):  # distinct, known dates
        os.utime(train / f"ckpt-{step}.index", (1_700_000_000 + 600 * i,) * 2)
    (train / "flags.txt").write_text("--problem=translate_toy\n")
    os.utime(train / "flags.txt", (1_699_999_000,) * 2)
    (root / "src.txt").write_text("\n".join(SOURCE) + "\n")
    (root / "ref.txt").write_text("\n".join(REFERENCE) + "\n")
    return root


def _translate_all(root, out, *extra):
    return translate_all.main(
        [
            f"--model_dir={root / 'train'}",
            f"--source={root / 'src.txt'}",
            f"--translations_dir={out}",
            "--problem=translate_toy",
            f"--data_dir={root / 'data'}",
            "--beam_size=2",
            "--decode_hparams=extra_length=4,batch_size=1",  # as DECODE's
            *extra,
        ]
    )


def _decode(root, *extra):
    base = ["--problem=translate_toy", f"--data_dir={root / 'data'}"]
    return decoder.main([*base, f"--decode_hparams={DECODE}", *extra])


def _events(event_dir):
    """{step: ({tag: value}, wall_time)} of every scalar event in the dir's event files."""
    found = {}
    for name in sorted(os.listdir(event_dir)):
        if "tfevents" in name:
            for event in tf.compat.v1.train.summary_iterator(str(event_dir / name)):
                if event.summary.value:
                    values = {v.tag: v.simple_value for v in event.summary.value}
                    assert event.step not in found, f"step {event.step} written twice"
                    found[event.step] = (values, event.wall_time)
    return found


@pytest.mark.slow
def test_translate_all_then_bleu_per_step(run, tmp_path, capsys):
    transl, events = tmp_path / "transl", tmp_path / "events"
    assert _translate_all(run, transl) == 0
    names = sorted(os.listdir(transl))
    assert names == [f"translate_toy-{s}" for s in (10, 20, 30)] + ["translate_toy-flags.txt"]
    outputs = {s: (transl / f"translate_toy-{s}").read_text() for s in (10, 20, 30)}
    assert all(len(t.splitlines()) == 3 for t in outputs.values())
    assert len(set(outputs.values())) == 3  # three models, three translations
    for s in (10, 20, 30):  # dated like their checkpoints (T2T's --keep_timestamp)
        ckpt_time = os.path.getmtime(run / "train" / f"ckpt-{s}.index")
        assert os.path.getmtime(transl / f"translate_toy-{s}") == ckpt_time
    assert os.path.getmtime(transl / "translate_toy-flags.txt") == 1_699_999_000

    # Restoring ckpt-20 into the model loaded for ckpt-10 decodes as a fresh load of it does;
    # t2t-decoder --keep_timestamp dates its output like the checkpoint.
    single = tmp_path / "single.txt"
    ckpt20 = run / "train" / "ckpt-20"
    flags = [f"--checkpoint_path={ckpt20}", f"--decode_from_file={run / 'src.txt'}"]
    assert _decode(run, *flags, f"--decode_to_file={single}", "--keep_timestamp") == 0
    assert single.read_text() == outputs[20]
    assert os.path.getmtime(single) == os.path.getmtime(str(ckpt20) + ".index")
    # --decode_shards: two workers' shares (1 and 2 lines), joined, are the whole decode.
    # Worker 1 names its output as T2T does with shards_start_offset=2, shard_google_format
    # and no --decode_to_file: the input's shard name, suffixed again (_decode_filename).
    shard = ["--decode_shards=2", "--worker_id=0", f"--decode_to_file={single}"]
    assert _decode(run, *flags, *shard) == 0
    named = f"--decode_hparams={DECODE},shards_start_offset=2,shard_google_format=True"
    assert _decode(run, *flags, "--decode_shards=2", "--worker_id=1", named) == 0
    suffix = "-00003-of-00002"
    (second,) = run.glob(
        f"src.txt{suffix}{suffix}.transformer.*.translate_toy.beam2.alpha0.6.decodes"
    )
    parts = [(tmp_path / "single.txt000").read_text(), second.read_text()]
    assert [len(p.splitlines()) for p in parts] == [1, 2]
    assert "".join(parts) == outputs[20]

    # A rerun continues: only the missing translation is written.
    (transl / "translate_toy-30").unlink()
    before = os.stat(transl / "translate_toy-10").st_mtime_ns
    assert _translate_all(run, transl) == 0
    assert (transl / "translate_toy-30").read_text() == outputs[30]
    assert os.stat(transl / "translate_toy-10").st_mtime_ns == before

    # One BLEU scalar per checkpoint step under T2T's tags, dated like the translation, plus
    # T2T's report_zero at step 0 dated like the oldest file (the run's flags.txt).
    argv = [f"--translations_dir={transl}", f"--reference={run / 'ref.txt'}"]
    (transl / "older_dir").mkdir()  # T2T's oldest *file*: a directory's time is not read
    os.utime(transl / "older_dir", (1_600_000_000, 1_600_000_000))
    for project_only in ("--json", "--bleu_variant=all", "--target_lang=en"):
        assert bleu.main([*argv, f"--event_dir={events}", project_only]) == 1  # not ignored
    assert "are --translation's" in capsys.readouterr().err
    assert bleu.main([*argv, f"--event_dir={events}"]) == 0
    said = capsys.readouterr().err.splitlines()
    written = _events(events)
    assert sorted(written) == [0, 10, 20, 30]
    assert written[0] == ({"BLEU_uncased": 0.0, "BLEU_cased": 0.0}, 1_699_999_000)
    for s in (10, 20, 30):
        hyps = outputs[s].splitlines()
        expected = {
            "BLEU_uncased": t2t_bleu(REFERENCE, hyps, case_sensitive=False),
            "BLEU_cased": t2t_bleu(REFERENCE, hyps, case_sensitive=True),
        }
        values, wall_time = written[s]
        assert values == pytest.approx(expected, abs=1e-4)
        for tag, value in values.items():  # T2T's log lines, one a tag
            assert f"{transl}/translate_toy-{s}: {tag} = {value:6.2f}" in said, said
        assert wall_time == os.path.getmtime(transl / f"translate_toy-{s}")
    assert (events / "last_evaluated_step.txt").read_text().strip() == "30"

    # Steps already written are skipped; a new file is scored alone (no second step 0).
    assert bleu.main([*argv, f"--event_dir={events}"]) == 0
    (transl / "translate_toy-40").write_text("\n".join(REFERENCE) + "\n")
    assert bleu.main([*argv, f"--event_dir={events}", "--bleu_variant=cased"]) == 0
    written = _events(events)
    assert sorted(written) == [0, 10, 20, 30, 40]
    assert written[40][0] == {"BLEU_cased": pytest.approx(100.0)}


def test_decoder_command_is_run_per_checkpoint(run, tmp_path):
    """T2T's --decoder_command: {params} becomes t2t-decoder's flags for each checkpoint."""
    log = tmp_path / "log"
    transl = tmp_path / "transl"
    assert _translate_all(run, transl, f"--decoder_command=echo {{params}} >> {log}") == 0
    lines = log.read_text().splitlines()
    assert len(lines) == 3
    for line, step in zip(lines, (10, 20, 30), strict=True):
        assert f"--checkpoint_path={run / 'train'}/ckpt-{step} " in line
        assert f"--decode_to_file={transl}/translate_toy-{step} " in line
        assert line.endswith("--keep_timestamp")
        # T2T always passes beam_size and alpha (its defaults 4 and 0.6 when not given)
        assert "--decode_hparams=beam_size=2,alpha=0.6,extra_length=4,batch_size=1 " in line
    # T2T fills the command from its main's locals: the checkpoint's StepFile too.
    fields = "{model.steps} {out_file} {model[1]:.0f}x{model_dir}"
    assert _translate_all(run, tmp_path / "t3", f"--decoder_command=echo {fields} >> {log}") == 0
    tail = log.read_text().splitlines()[3:]
    mtimes = [os.path.getmtime(run / "train" / f"ckpt-{s}.index") for s in (10, 20, 30)]
    assert tail == [
        f"{s} {tmp_path}/t3/translate_toy-{s} {t:.0f}x{run / 'train'}"
        for s, t in zip((10, 20, 30), mtimes, strict=True)
    ]
    for command in ("qsub {FLAGS.model}", "qsub {", "qsub {0}"):  # one line each
        assert _translate_all(run, tmp_path / "t2", f"--decoder_command={command}") == 1


def test_decoder_flag_errors_are_one_line(run, tmp_path, capsys):
    src = ["--output_dir=x", f"--decode_from_file={run / 'src.txt'}"]
    assert _decode(run, *src, "--decode_shards=2", "--worker_id=2") == 1
    assert _decode(run, "--output_dir=x", "--keep_timestamp") == 1
    err = capsys.readouterr().err.splitlines()
    assert (
        err[0]
        == "t2t-decoder: error: --worker_id=2 must be in 0..1 and --decode_shards at least 1."
    )
    assert err[1] == "t2t-decoder: error: --keep_timestamp applies to --decode_from_file only."


def test_t2t_pre_split_shard_files_are_read_when_the_whole_file_is_absent(tmp_path):
    from t2t_repro.decoding.shards import ShardNames, share_bounds, worker_lines

    assert [share_bounds(5, 3, w) for w in range(3)] == [(0, 1), (1, 3), (3, 5)]
    (tmp_path / "in.en001").write_text("b\nc\n")
    (tmp_path / "in.en-00005-of-00004").write_text("d\n")
    src = str(tmp_path / "in.en")
    assert worker_lines(src, ShardNames(2, 1)) == ([b"b", b"c"], f"{src}001")
    google = ShardNames(4, 2, start_offset=3, google_format=True)
    assert worker_lines(src, google) == ([b"d"], f"{src}-00005-of-00004")
    with pytest.raises(FileNotFoundError, match="pre-split"):
        worker_lines(src, ShardNames(2, 0))


def test_decode_shards_split_the_delimiters_records_as_t2ts_workers_read_them(tmp_path):
    """T2T's decode_from_file splits each worker's file by the decode hparam delimiter
    (_get_sorted_inputs): the shares are records, not lines (a one-line file of four
    '|'-records gave worker 0 nothing and worker 1 the whole line)."""
    from t2t_repro.decoding.shards import ShardNames, earlier_lines, worker_lines

    src = tmp_path / "in.en"
    src.write_bytes(b"a b|c|d e f|g|\n")
    shares = [worker_lines(str(src), ShardNames(2, w), "|")[0] for w in range(2)]
    assert shares == [[b"a b", b"c"], [b"d e f", b"g"]]
    assert earlier_lines(str(src), ShardNames(2, 1), "|") == [b"a b", b"c"]
    (tmp_path / "in.de001").write_bytes(b"x|y|")  # T2T's pre-split file, split the same way
    assert worker_lines(str(tmp_path / "in.de"), ShardNames(2, 1), "|")[0] == [b"x", b"y"]


def test_shard_names_are_t2ts():
    """As T2T 1.15.7's decoding._add_shard_to_filename names them (its outputs, recorded with
    decode hparams shards=4, shard_id=2 and these)."""
    from t2t_repro.decoding.shards import ShardNames

    t2t = {
        (0, False): "src.en002",
        (10, False): "src.en012",
        (0, True): "src.en-00002-of-00004",
        (3, True): "src.en-00005-of-00004",
    }
    for (offset, google), name in t2t.items():
        assert ShardNames(4, 2, offset, google).of("src.en") == name
    assert ShardNames(4, 0, -1).of("x") == "x-001"  # "%.3d" % -1
    assert ShardNames(1200, 1100, 10).of("x") == "x1110"


# Averaging treats every weight alike: the one-layer model of width 32 (with transformer_tiny's
# two layers of 128, its ten builds and restores took the test 3.5-3.8 core-s, now 1.8).
AVERAGED = dict(hparams_set="transformer_tiny", overrides=TINY_MODEL, vocab_size=30)


def _checkpoints_with_known_weights(train, steps=(100, 200, 300, 400)):
    """Random float32 weights per step; returns {step: [weights]} as saved."""
    model = build_model(**AVERAGED)
    (train / "hparams.json").write_text(model.hparams.to_json())
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=model), str(train), max_to_keep=10, checkpoint_name="ckpt"
    )
    rng, saved = np.random.default_rng(0), {}
    for i, step in enumerate(steps):
        saved[step] = [rng.standard_normal(w.shape).astype(np.float32) for w in model.weights]
        for w, value in zip(model.weights, saved[step], strict=True):
            w.assign(value)
        manager.save(checkpoint_number=step)
        os.utime(train / f"ckpt-{step}.index", (1_700_000_000 + 600 * i,) * 2)
    return saved


def _assert_weights(avg_prefix, expected):
    model = build_model(**AVERAGED)
    restore_model(model, str(avg_prefix))
    for w, value in zip(model.weights, expected, strict=True):
        np.testing.assert_array_equal(w.numpy(), value)


def test_avg_all_sliding_windows_equal_by_hand_averages(tmp_path):
    train = tmp_path / "train"
    train.mkdir()
    saved = _checkpoints_with_known_weights(train)

    def by_hand(*steps):
        return [
            (sum(saved[s][i].astype(np.float64) for s in steps) / len(steps)).astype(np.float32)
            for i in range(len(saved[100]))
        ]

    # T2T's flag --min_steps implies the sliding window: steps >= 150, n=2.
    avg = tmp_path / "avg"
    assert (
        avg_all.main([f"--model_dir={train}", f"--output_dir={avg}", "--n=2", "--min_steps=150"])
        == 0
    )
    assert sorted(n for n in os.listdir(avg) if n.endswith(".index")) == [
        "ckpt-300.index",
        "ckpt-400.index",
    ]
    _assert_weights(avg / "ckpt-300", by_hand(200, 300))
    _assert_weights(avg / "ckpt-400", by_hand(300, 400))
    for step in (300, 400):  # dated like the newest checkpoint of the window (T2T)
        assert os.path.getmtime(avg / f"ckpt-{step}.index") == os.path.getmtime(
            train / f"ckpt-{step}.index"
        )

    # All windows of n=3; a rerun continues (existing windows kept, a removed one rewritten);
    # the last window is bit for bit today's default average, at the same path.
    avg3, log = tmp_path / "avg3", []
    written = average_sliding_windows(str(train), str(avg3), 3, log=log.append)
    assert [os.path.basename(p) for p in written] == ["ckpt-300", "ckpt-400"]
    _assert_weights(avg3 / "ckpt-300", by_hand(100, 200, 300))
    for name in os.listdir(avg3):
        if name.startswith("ckpt-300."):
            (avg3 / name).unlink()
    written = average_sliding_windows(str(train), str(avg3), 3, log=log.append)
    assert [os.path.basename(p) for p in written] == ["ckpt-300"]
    _assert_weights(avg3 / "ckpt-300", by_hand(100, 200, 300))
    kept = f"{avg3 / 'ckpt-400'} is already the average of ckpt-200, ckpt-300, ckpt-400; kept"
    assert log[-1] == kept
    with pytest.raises(CheckpointError, match="holds ckpt-300, an earlier average of other"):
        average_sliding_windows(str(train), str(avg3), 2, log=log.append)  # n=3's windows
    default, _ = average_checkpoints(str(train), str(tmp_path / "default"), 3, log=log.append)
    assert os.path.basename(default) == "ckpt-400"
    _assert_weights(avg3 / "ckpt-400", by_hand(200, 300, 400))
    _assert_weights(default, by_hand(200, 300, 400))

    # Fewer checkpoints than n: nothing written, said so.
    assert average_sliding_windows(str(train), str(tmp_path / "a9"), 9, log=log.append) == []
    assert "a window needs --n=9" in log[-1]
    assert avg_all.main([f"--model_dir={train}", "--sliding_window", "--max_step=200"]) == 1


def test_avg_all_runs_t2ts_defaults(tmp_path, monkeypatch):
    """T2T's t2t-avg-all without flags: the sliding window into avg/ of the working
    directory, with the run's flags.txt copied there, dated as it is; beyond T2T,
    --nosliding_window writes the newest window alone, from fewer checkpoints too."""
    train = tmp_path / "train"
    train.mkdir()
    _checkpoints_with_known_weights(train, steps=(100, 200, 300))
    (train / "flags.txt").write_text("--problem=translate_toy\n")
    os.utime(train / "flags.txt", (1_600_000_000,) * 2)
    monkeypatch.chdir(tmp_path)
    assert avg_all.main([f"--model_dir={train}", "--n=2"]) == 0
    avg = tmp_path / "avg"
    assert sorted(n for n in os.listdir(avg) if n.endswith(".index")) == [
        "ckpt-200.index",
        "ckpt-300.index",
    ]
    assert os.path.getmtime(avg / "flags.txt") == 1_600_000_000
    assert avg_all.main([f"--model_dir={train}", "--n=2"]) == 0  # a rerun: its own flags.txt
    newest = tmp_path / "newest"
    argv = [f"--model_dir={train}", f"--output_dir={newest}", "--n=5", "--nosliding_window"]
    assert avg_all.main(argv) == 0
    assert sorted(n for n in os.listdir(newest) if n.endswith(".index")) == ["ckpt-300.index"]
    assert avg_all.main([*argv[:3], "--nosliding_window", "--wait_minutes=1"]) == 1


def test_follow_steps_waits_for_new_files_then_stops():
    """With wait_minutes, polling continues until no file has come for that long after the
    last one's time; files are handed out once, in step order, from min_steps."""
    clock = {"now": 1000.0}
    files = [StepFile("a-5", 990.0, 5), StepFile("a-1", 900.0, 1)]
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        clock["now"] += seconds
        if len(sleeps) == 3:  # a new file arrives while waiting
            files.append(StepFile("a-9", clock["now"], 9))

    follow = follow_steps(
        lambda: sorted(files, key=lambda f: f.step),
        wait_minutes=1,
        min_steps=2,
        log=lambda m: None,
        sleep=sleep,
        now=lambda: clock["now"],
    )
    assert [f.step for f in follow] == [5, 9]
    # It waited 3 polls for a-9, then until a-9's time + 60 s.
    assert clock["now"] >= 1030 + 60 and clock["now"] <= 1030 + 60 + 10
    assert [f.step for f in follow_steps(lambda: list(files), 0, 6, log=print)] == [9]
    # T2T waits from a file's ctime: one dated back (a translation, an average: its
    # checkpoint's time) was still just made, so the wait goes on from now.
    files[:] = [StepFile("b-3", 100.0, 3, ctime=clock["now"])]
    start = clock["now"]
    assert [
        f.step
        for f in follow_steps(
            lambda: list(files), 1, log=print, sleep=sleep, now=lambda: clock["now"]
        )
    ] == [3]
    assert clock["now"] >= start + 60
