"""How every tool ends on a user error: ``<tool>: error: <message>``, exit code 1, no traceback."""

import argparse
import subprocess
import sys

import pytest

from t2t_repro.commands import cli
from tests.tools import ROOT


def _run(main, capsys):
    rc = cli.run("t2t-test", main, argparse.ArgumentParser(), [])
    return rc, capsys.readouterr().err


def test_user_errors_are_one_line_and_exit_1(capsys):
    from t2t_repro.checkpoints.errors import CheckpointError
    from t2t_repro.data.text_files import DataError

    for error in (
        DataError("bad line 3"),
        CheckpointError("no checkpoint in /x"),
        FileNotFoundError("/y does not exist"),
        cli.UsageError("--z required"),
    ):

        def main(args, error=error):
            raise error

        rc, err = _run(main, capsys)
        assert rc == 1 and err == f"t2t-test: error: {error}\n"


def test_every_user_facing_error_class_derives_from_user_error(capsys):
    from t2t_repro.checkpoints.errors import CheckpointError
    from t2t_repro.data.text_files import DataError
    from t2t_repro.errors import UserError
    from t2t_repro.hparam import HParamsError
    from t2t_repro.parsing.trees import TreeParseError
    from t2t_repro.registry import RegistryError
    from t2t_repro.serving import ExportError
    from t2t_repro.text_encoding.text_encoder import VocabFileError
    from t2t_repro.training.trainer import TrainingError
    from t2t_repro.workflow import WorkflowError

    classes = (
        cli.UsageError,
        DataError,
        HParamsError,
        RegistryError,
        ExportError,
        CheckpointError,
        VocabFileError,
        TrainingError,
        WorkflowError,
        TreeParseError,
    )
    for error_class in classes:
        assert issubclass(error_class, UserError), error_class

        def main(args, error_class=error_class):
            raise error_class("what is wrong and what to do")

        rc, err = _run(main, capsys)
        assert rc == 1 and err == "t2t-test: error: what is wrong and what to do\n"


def test_bugs_are_not_disguised_as_user_errors(capsys):
    def main(args):
        raise ZeroDivisionError("a bug")

    with pytest.raises(ZeroDivisionError):
        cli.run("t2t-test", main, argparse.ArgumentParser(), [])


def test_scoring_tools_do_not_start_tensorflow(tmp_path):
    # t2t-evalb never loads a model: its error handling must not import TensorFlow either.
    gold = tmp_path / "gold.trees"
    gold.write_text("(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))\n")
    code = (
        "import sys\n"
        "from t2t_repro.commands import evalb\n"
        f"assert evalb.main(['--gold={gold}', '--test={gold}']) == 0\n"
        "print('tensorflow' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "Bracketing FMeasure       = 100.00" in proc.stdout
    assert proc.stdout.strip().endswith("False")


def _refused_by_the_trainer(tmp_path, capsys, decode_hparams: str) -> str:
    """t2t-trainer with ``--decode_hparams``: refused in one line, nothing written; the line."""
    from t2t_repro.commands import trainer

    argv = [
        "--problem=translate_toy",
        "--hparams_set=transformer_tiny",
        f"--data_dir={tmp_path / 'data'}",
        f"--output_dir={tmp_path / 'train'}",
        f"--decode_hparams={decode_hparams}",
    ]
    assert trainer.main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "train").exists(), err
    return err


def test_a_decode_hparams_typo_is_refused_before_training(tmp_path, capsys):
    """T2T's trainer parses --decode_hparams at start on every schedule; here it was first
    parsed at the first dev decodes (never under the default schedule)."""
    err = _refused_by_the_trainer(tmp_path, capsys, "beam_sise=4")
    assert "beam_sise" in err and "beam_size" in err


def test_decode_shards_of_the_trainers_dev_decodes_are_refused(tmp_path, capsys):
    """T2T's trainer with decode hparams shards=N > 1 decodes only data shard shard_id of dev
    (decoding.py, decode_from_dataset); here the two were dropped and all of dev decoded."""
    err = _refused_by_the_trainer(tmp_path, capsys, "shards=2,shard_id=1")
    assert "shards=2" in err and "t2t-decoder --decode_shards" in err, err
