"""Nothing already written is lost: garbled state files, foreign checkpoints, averaging."""

import os

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.checkpoints import files as checkpoint_files
from t2t_repro.checkpoints.averaging import average_checkpoints, is_current_average
from t2t_repro.checkpoints.errors import CheckpointError
from t2t_repro.checkpoints.loading import resolve_checkpoint
from t2t_repro.checkpoints.training import TrainingCheckpoint
from t2t_repro.hparam import HParamsError
from t2t_repro.optimizers import make_optimizer
from tests.model_utils import build_model
from tests.tools import PLUMBING_MODEL

GARBLED = 'model_checkpoint_path: "ckpt-6\x00\xff garbage {{{'


def training_dir(path, steps=(200, 400, 600)):
    """A training dir as the trainer writes it: model + optimizer checkpoints, hparams.json."""
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=30)
    optimizer = make_optimizer(model.hparams)
    optimizer.build(model.trainable_variables)
    (path / "hparams.json").write_text(model.hparams.to_json())
    ckpt = TrainingCheckpoint(str(path), model, optimizer)
    ckpt.restore_latest(log=lambda m: None)
    for step in steps:
        optimizer.iterations.assign(step)
        ckpt.save(step)
    return model, optimizer


def test_garbled_or_empty_state_file_resumes_from_newest_complete_checkpoint(tmp_path):
    model, optimizer = training_dir(tmp_path)
    for content in (GARBLED, ""):
        (tmp_path / "checkpoint").write_text(content, errors="surrogateescape")
        optimizer.iterations.assign(0)
        notes = []
        ckpt = TrainingCheckpoint(str(tmp_path), model, optimizer)
        assert ckpt.restore_latest(log=notes.append) == str(tmp_path / "ckpt-600")
        assert int(optimizer.iterations.numpy()) == 600  # not a new run from step 0
        assert len(notes) == 1 and "newest complete checkpoint on disk, ckpt-600" in notes[0]
        assert (tmp_path / "checkpoint.unreadable").read_text(errors="surrogateescape") == content
        assert checkpoint_files.read_state(str(tmp_path)).latest == str(tmp_path / "ckpt-600")
        # The decoder's directory lookup finds it too.
        assert resolve_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-600")
    for step in (200, 400, 600):
        assert checkpoint_files.is_complete(str(tmp_path / f"ckpt-{step}"))


def test_keep_checkpoint_max_deletes_after_a_repaired_state_file_and_0_keeps_all(tmp_path):
    """A state file the repair wrote lists each checkpoint's time, so --keep_checkpoint_max
    still deletes the oldest (without times tf.train.CheckpointManager queued none, and they
    were kept for good); T2T's --keep_checkpoint_max=0 keeps every one (Saver's max_to_keep)."""
    model = build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=30)
    optimizer = make_optimizer(model.hparams)
    optimizer.build(model.trainable_variables)
    for keep, left in ((2, [500, 600]), (0, [100, 200, 300, 400, 500, 600])):
        run = tmp_path / f"keep{keep}"
        run.mkdir()
        for steps in ((100, 200), (300, 400, 500, 600)):  # a garbled state file between
            ckpt = TrainingCheckpoint(str(run), model, optimizer, keep_checkpoint_max=keep)
            ckpt.restore_latest(log=lambda m: None)  # the second repairs the state file
            for step in steps:
                optimizer.iterations.assign(step)
                ckpt.save(step)
            (run / "checkpoint").write_text(GARBLED, errors="surrogateescape")
        assert sorted(int(p.name[5:-6]) for p in run.glob("ckpt-*.index")) == left


def test_incomplete_checkpoints_and_orphan_temp_dirs(tmp_path):
    training_dir(tmp_path)
    data = next(tmp_path.glob("ckpt-600.data-*"))
    data.rename(tmp_path / "moved")
    (tmp_path / "ckpt-800_temp").mkdir()
    (tmp_path / "ckpt-800_temp" / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"x")
    path, note = checkpoint_files.latest_checkpoint(str(tmp_path))
    assert path == str(tmp_path / "ckpt-400") and "names ckpt-600" in note
    assert checkpoint_files.remove_orphan_temp_dirs(str(tmp_path)) == [
        str(tmp_path / "ckpt-800_temp")
    ]
    assert not (tmp_path / "ckpt-800_temp").exists() and (tmp_path / "ckpt-400.index").exists()


def test_save_never_overwrites_a_checkpoint_this_run_did_not_write(tmp_path):
    model, optimizer = training_dir(tmp_path, steps=(200,))
    before = (tmp_path / "ckpt-200.index").read_bytes()
    (tmp_path / "checkpoint").unlink()  # Whatever the state file says...
    ckpt = TrainingCheckpoint(str(tmp_path), model, optimizer)
    ckpt.restore_latest(log=lambda m: None)
    with pytest.raises(CheckpointError, match="did not write it; not overwriting"):
        ckpt.save(200)
    assert (tmp_path / "ckpt-200.index").read_bytes() == before
    assert ckpt.save(201).endswith("ckpt-201") and ckpt.save(201).endswith("ckpt-201")


def variable_names(prefix):
    return {name for name, _ in tf.train.list_variables(prefix)}


def test_averaging_never_touches_training_checkpoints(tmp_path):
    training_dir(tmp_path)
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(CheckpointError, match=f"use --output_dir={tmp_path / 'avg'}"):
        average_checkpoints(str(tmp_path), str(tmp_path), n=2, log=lambda m: None)
    other = tmp_path.parent / (tmp_path.name + "_other")
    other.mkdir()
    training_dir(other, steps=(5,))
    (other / "hparams.json").unlink()  # checkpoints alone make it someone else's
    with pytest.raises(CheckpointError, match="did not write"):
        average_checkpoints(str(tmp_path), str(other), n=2, log=lambda m: None)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files
    # Into <dir>/avg: fine, and again (newer checkpoint) keeps the earlier average listed.
    log = []
    first, _ = average_checkpoints(str(tmp_path), str(tmp_path / "avg"), n=2, log=log.append)
    assert "averaging ckpt-400, ckpt-600" in log
    averaged = {p.name: p.read_bytes() for p in (tmp_path / "avg").iterdir()}
    # A rerun asks for the average it wrote: kept as it is (T2T would write it again).
    again = average_checkpoints(str(tmp_path), str(tmp_path / "avg"), n=2, log=log.append)
    assert again == (first, False)
    assert log[-1] == f"{first} is already the average of ckpt-400, ckpt-600; kept"
    assert {p.name: p.read_bytes() for p in (tmp_path / "avg").iterdir()} == averaged
    (tmp_path / "avg" / "checkpoint").unlink()  # a write stopped before the state file
    assert average_checkpoints(str(tmp_path), str(tmp_path / "avg"), n=2) == (first, False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "avg").iterdir()} == averaged
    with pytest.raises(
        CheckpointError, match="already holds ckpt-600, an earlier average of other"
    ):
        average_checkpoints(str(tmp_path), str(tmp_path / "avg"), n=3, log=log.append)
    later = os.path.getmtime(first + ".index") + 10  # ckpt-600 rewritten since the average
    os.utime(tmp_path / "ckpt-600.index", (later, later))
    with pytest.raises(CheckpointError, match="or of them before they were rewritten"):
        average_checkpoints(str(tmp_path), str(tmp_path / "avg"), n=2, log=log.append)
    assert {p.name: p.read_bytes() for p in (tmp_path / "avg").iterdir()} == averaged
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "avg"} == files
    assert len(variable_names(str(tmp_path / "ckpt-600"))) > len(variable_names(first))


def test_an_average_is_current_while_its_sources_are_as_it_read_them(tmp_path):
    """Files only: the marker's last line for the step names the sources, a path with a space
    included, and none still on disk is newer than the average's data file (its .index may
    be dated like its newest source: the sliding window's, T2T's)."""
    train, avg = tmp_path / "my run", tmp_path / "my run" / "avg"
    avg.mkdir(parents=True)
    sources = [str(train / f"ckpt-{s}") for s in (100, 200)]
    for name in ("ckpt-100.index", "ckpt-200.index"):
        (train / name).write_bytes(b"")
    (avg / "averaged_from.txt").write_text(
        f"ckpt-200: {sources[0]}\nckpt-200: {' '.join(sources)}\n"
    )
    (avg / "ckpt-200.index").write_bytes(b"")
    (avg / "ckpt-200.data-00000-of-00001").write_bytes(b"")
    now = os.path.getmtime(avg / "ckpt-200.data-00000-of-00001")
    os.utime(avg / "ckpt-200.index", (now - 50, now - 50))  # dated like ckpt-200
    os.utime(train / "ckpt-100.index", (now - 40, now - 40))  # copied after ckpt-200
    os.utime(train / "ckpt-200.index", (now - 50, now - 50))
    assert is_current_average(str(avg), 200, sources)
    assert not is_current_average(str(avg), 200, sources[1:])  # the last line counts
    assert not is_current_average(str(avg), 100, sources)  # no line for that step
    (train / "ckpt-100.index").unlink()  # training removed it: it was not rewritten
    assert is_current_average(str(avg), 200, sources)
    os.utime(train / "ckpt-200.index", (now + 5, now + 5))
    assert not is_current_average(str(avg), 200, sources)


@pytest.mark.slow
def test_averaging_says_what_it_skipped_and_ignores_a_garbled_state_file(tmp_path):
    training_dir(tmp_path)
    (tmp_path / "ckpt-600.index").rename(tmp_path / "ckpt-600.index.bak")
    log = []
    average_checkpoints(str(tmp_path), str(tmp_path / "avg"), n=2, log=log.append)
    assert any("skipped ckpt-600 (no .index file)" in m for m in log)
    assert "averaging ckpt-200, ckpt-400" in log
    (tmp_path / "checkpoint").write_text(GARBLED)
    log = []
    average_checkpoints(str(tmp_path), str(tmp_path / "avg2"), n=1, log=log.append)
    assert "averaging ckpt-400" in log


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda hp: hp.update(hidden_size="abc"), r"hidden_size is 'abc' \(str\); expected int"),
        (lambda hp: hp.pop("num_heads"), "lacks num_heads"),
        (lambda hp: hp.update(num_heads=3), "num_heads=3 does not divide"),
    ],
)
def test_averaging_reports_a_bad_hparams_json_in_one_line(tmp_path, edit, message):
    import json

    training_dir(tmp_path, steps=(1,))
    hp = json.loads((tmp_path / "hparams.json").read_text())
    edit(hp)
    (tmp_path / "hparams.json").write_text(json.dumps(hp))
    with pytest.raises(HParamsError, match=message) as error:
        average_checkpoints(str(tmp_path), str(tmp_path / "avg"), log=lambda m: None)
    assert "\n" not in str(error.value)
    assert not (tmp_path / "avg" / "ckpt-1.index").exists()


def test_corrupt_checkpoint_bytes_are_one_clear_error(tmp_path):
    from t2t_repro.checkpoints.loading import restore_model

    model, _ = training_dir(tmp_path, steps=(3,))
    data = next(tmp_path.glob("ckpt-3.data-*"))
    raw = bytearray(data.read_bytes())
    for cut in (len(raw) // 2, None):  # truncated, then garbled
        data.write_bytes(bytes(raw[:cut]) if cut else bytes(b ^ 0xFF for b in raw))
        with pytest.raises(CheckpointError, match="unreadable or corrupt") as error:
            restore_model(model, str(tmp_path / "ckpt-3"))
        assert "\n" not in str(error.value)
    np.testing.assert_array_equal(data.read_bytes(), bytes(b ^ 0xFF for b in raw))


def test_a_shape_the_checkpoint_lacks_stops_the_resume_in_one_line(tmp_path):
    """A rerun reads --hparams over the saved hparams (T2T's create_hparams), so a changed
    width reaches the restore: one line naming the shapes and what to do, nothing written."""
    training_dir(tmp_path, steps=(200,))
    wider = build_model("transformer_tiny", PLUMBING_MODEL.replace("32", "64"), vocab_size=30)
    optimizer = make_optimizer(wider.hparams)
    optimizer.build(wider.trainable_variables)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(CheckpointError) as error:
        TrainingCheckpoint(str(tmp_path), wider, optimizer).restore_latest(log=lambda m: None)
    message = str(error.value)
    assert "\n" not in message and "incompatible tensor with shape" in message
    assert "a --hparams value that changes a shape cannot resume it" in message
    assert sorted(os.listdir(tmp_path)) == before
