"""An empty dev split (#46 F1): a usr_dir that deals few pairs over many shards leaves every dev
shard empty, as T2T's ``generate_files`` does. Training goes on; each evaluation is skipped with
one line saying why and what to do (T2T's Estimator reports metrics over nothing), and no
traceback comes from the dev decodes' BLEU of no sentences."""

import shutil
from pathlib import Path

from t2t_repro.metrics.dev_metric import DevBleu
from t2t_repro.training.loop.dev_decodes import make_dev_decodes
from tests.grappler import grappler_off_env
from tests.tools import NO_DROPOUT, PLUMBING_MODEL, run_tool

DATA = Path(__file__).resolve().parent / "data"
USR_DIR = DATA / "t2t_usr_dir_patterns" / "chars_name_usr"  # a character vocabulary: no file
REFERENCE = DATA / "t2t_usr_dir_patterns_reference" / "data" / "chars_name_usr"


def test_training_with_empty_dev_shards_skips_each_evaluation_in_one_line(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(REFERENCE, data)  # T2T 1.15.7's datagen of the usr_dir
    dev_shards = list(data.glob("translit_ab_to_xy-dev-*"))
    assert dev_shards
    for shard in dev_shards:
        shard.write_bytes(b"")  # what T2T's datagen leaves when a dev shard gets no pair
    run = run_tool(
        "t2t-trainer",
        "--problem=translit_ab_to_xy",
        f"--t2t_usr_dir={USR_DIR}",
        "--hparams_set=transformer_tiny",
        f"--data_dir={data}",
        f"--output_dir={tmp_path / 'run'}",
        f"--hparams={PLUMBING_MODEL},{NO_DROPOUT},batch_size=512,batch_shuffle_size=16",
        "--train_steps=1",
        "--local_eval_frequency=1",
        "--steps_per_loop=1",
        "--schedule=continuous_train_and_eval",  # evaluates in the loop, with dev BLEU decodes
        env=grappler_off_env(),  # the run's lines are checked, not its numbers
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    evals = [line for line in run.stdout.splitlines() if line.startswith("eval at step")]
    assert evals == [
        f"eval at step 1: skipped, {data}/translit_ab_to_xy-dev* holds no examples (datagen "
        "dealt fewer pairs than the split has shards): generate the split with fewer shards "
        "or more data, or train with --schedule=train"
    ], run.stdout
    assert "training finished at step 1" in run.stdout


class _EmptyDev:
    """A problem whose dev split holds no examples (``--eval_use_test_set`` evaluates the
    test split, but the dev decodes read dev)."""

    def dev_metric(self, data_dir, hparams, num_examples):
        return DevBleu([], [])

    def filepattern(self, data_dir, split):
        return f"{data_dir}/p-{split}-*"


def test_no_dev_decodes_of_an_empty_dev_split(capsys):
    assert make_dev_decodes(None, _EmptyDev(), "/d", None, num_examples=4) is None
    assert capsys.readouterr().out == (
        "no dev decodes: /d/p-dev-* holds no examples; generate the dev split with fewer "
        "shards or more data\n"
    )
