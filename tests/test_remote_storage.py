"""Data, output and checkpoint dirs on any file system TensorFlow reads (gs://, ram://...).

TF's in-memory ``ram://`` file system stands in for object storage: it lives in one process,
so the tools run here through their ``main(argv)``, in this process (issue #27 item 8).
"""

import pytest
import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.atomic_write import atomic_open, write_text_atomically
from t2t_repro.commands import cli
from tests.fresh_process import run_in_fresh_process
from tests.tool_server import GRAPPLER_OFF_ENV
from tests.tools import NO_DROPOUT, PLUMBING_MODEL, SMALL_BATCH_SHUFFLE

gfile = tf.io.gfile


def test_urls_survive_path_normalisation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for url in ("gs://bucket/run", "gs://b/data/vocab.txt", "ram://x/y", "ram://"):
        assert cli.expand(url) == url
    assert cli.expand("run") == str(tmp_path / "run")
    with pytest.raises(cli.UsageError, match="no file system for nosuch://"):
        cli.expand("nosuch://bucket/run")
    assert fileio.same_path("gs://b/run/", "gs://b/run") and not fileio.same_path(
        "gs://b/run", str(tmp_path / "gs:/b/run")
    )


def test_atomic_write_on_ram():
    write_text_atomically("ram://aw/a.txt", "one\n")
    with pytest.raises(RuntimeError):
        with atomic_open("ram://aw/a.txt") as f:
            f.write("half")
            raise RuntimeError("killed midway")
    assert fileio.listdir("ram://aw") == ["a.txt"]  # the temp file is gone
    with fileio.open("ram://aw/a.txt") as f:
        assert f.read() == "one\n"  # the old content survives a failed write
    write_text_atomically("ram://aw/a.txt", "two\n")
    assert gfile.GFile("ram://aw/a.txt").read() == "two\n"
    # ram:// says a string prefix of a stored name exists; fileio does not.
    assert not fileio.exists("ram://aw/a") and not fileio.isdir("ram://aw/a")
    assert fileio.isdir("ram://aw") and fileio.isfile("ram://aw/a.txt")
    with pytest.raises(FileNotFoundError):
        fileio.open("ram://aw/missing.txt")


@pytest.mark.slow
def test_datagen_train_average_decode_export_on_ram(tmp_path):
    """The tools in one process, as the test's body: in a fresh process, since the loaded
    SavedModel and the run's traces (~650 MB) would stay in the test process for good.
    Without Grappler: the test checks where files go, not T2T's numbers (tests/grappler.py)."""
    run_in_fresh_process(
        check_datagen_train_average_decode_export_on_ram, tmp_path, env={GRAPPLER_OFF_ENV: "1"}
    )


def check_datagen_train_average_decode_export_on_ram(tmp_path):
    # No capsys here: summaries.ConsoleLog binds sys.stdout when its module is first imported.
    from t2t_repro.builtin.problems.algorithmic import TranslateToy
    from t2t_repro.commands import avg_all, datagen, decoder, exporter, trainer

    TranslateToy.num_pairs = {"train": 800, "dev": 40, "test": 40}  # its own process: no undo

    root = "ram://e2e"
    data, train = f"{root}/data", f"{root}/train"
    common = ["--problem=translate_toy", f"--data_dir={data}"]
    assert datagen.main([*common, f"--tmp_dir={tmp_path}"]) == 0
    assert fileio.glob(f"{data}/translate_toy-train-*") and not fileio.glob(f"{data}/*.tmp")
    assert not (tmp_path / "ram:").exists()
    args = [
        *common,
        f"--output_dir={train}",
        "--hparams_set=transformer_tiny",
        f"--hparams=batch_size=256,max_length=16,{PLUMBING_MODEL},{NO_DROPOUT},{SMALL_BATCH_SHUFFLE}",
        "--train_steps=2",
        "--local_eval_frequency=2",
        "--eval_steps=1",
        "--eval_decode_examples=0",
        "--no-attention_images",
    ]
    assert trainer.main(args) == 0
    names = fileio.listdir(train)
    assert {"ckpt-2.index", "checkpoint", "hparams.json", "flags.txt"} <= set(names), names
    assert any(n.startswith("events.out.tfevents") for n in names)
    assert fileio.listdir(f"{train}/eval")
    # Resuming reads the run back from ram:// (hparams.json, checkpoint, input state).
    assert trainer.main([*args[:-5], "--train_steps=3", "--schedule=train", *args[-3:]]) == 0
    assert "ckpt-3.index" in fileio.listdir(train)

    assert avg_all.main([f"--model_dir={train}", f"--output_dir={train}/avg", "--n=2"]) == 0
    assert {"ckpt-3.index", "checkpoint", "averaged_from.txt"} <= set(
        fileio.listdir(f"{train}/avg")
    )

    write_text_atomically(f"{root}/src.txt", "a cat .\n")  # alone: its own decode length
    dec = [
        *common,
        f"--output_dir={train}",
        f"--checkpoint_path={train}/avg",
        "--decode_hparams=beam_size=1,extra_length=3",
    ]
    src, out = f"{root}/src.txt", f"{root}/out/dec.txt"
    assert decoder.main([*dec, f"--decode_from_file={src}", f"--decode_to_file={out}"]) == 0
    decodes = gfile.GFile(out).read().split("\n")
    assert len(decodes) == 2

    # no --export_dir: T2T's <the checkpoint's dir>/export/<unix time>, the dir of avg/ here
    # binary: TensorFlow's ram:// file system says saved_model.pb exists when a .pbtxt does
    # (a prefix match), and its loader then fails reading the .pb
    assert exporter.main([*dec, "--noas_text"]) == 0
    assert not fileio.glob(f"{train}/export/.export-*")  # no staging dir left beside it
    (export_dir,) = fileio.glob(f"{train}/export/[0-9]*")
    assert fileio.exists(f"{export_dir}/saved_model.pb")
    # The SavedModel copied to ram:// loads there and translates as t2t-decoder did.
    translate = tf.saved_model.load(export_dir).signatures["serving_default"]
    exported = translate(sources=tf.constant(["a cat ."]))["translations"].numpy()
    assert exported[0].decode() == decodes[0]
    assert not (tmp_path / "ram:").exists()
