"""T2T 1.15's Wikipedia language models under T2T's names (``t2t_compat/wiki_lm.py``):
datagen writes what T2T 1.15.7's writes on the same synthetic ``*wiki_*.txt.gz`` files (the
vocabulary, every shard's records' ids, the ``.txt`` files gunzipped beside them), and the
problem hparams are T2T's (tests/data/t2t_wiki_lm_reference, made by T2T itself:
tools/t2t_reference/make_t2t_wiki_lm_reference.py); so do the summarization and NLI problems
taking their vocabulary, on those files and their task's reference inputs."""

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest
import tensorflow as tf

import t2t_repro.t2t_compat.wiki_lm as wiki_lm
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat import registry as t2t_registry
from tests.t2t_records import ids_digest, problem_facts

REFERENCE = Path(__file__).parent / "data" / "t2t_wiki_lm_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_wiki_lm.json").read_text(encoding="utf-8"))
PROBLEMS = EXPECTED["problems"]
DATA = Path(__file__).parent / "data"
_CNNDM = DATA / "t2t_text_corpora_reference" / "cnn_dailymail" / "tmp"
_GLUE = DATA / "t2t_classification_reference" / "tmp"
TASK_INPUTS = {  # as the reference script's TASKS: the inputs beside the wiki files
    "summarize": [_CNNDM / n for n in ("all_train.txt", "all_val.txt", "all_test.txt")]
    + [_CNNDM / "cnn_stories.tgz", _CNNDM / "dailymail_stories.tgz"],
    "multi_nli": [_GLUE / "MNLI.zip"],
    "stanford_nli": [_GLUE / "SNLI.zip"],
}


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_datagen_writes_what_t2t_1_15_7_writes(name, tmp_path):
    tmp_dir = tmp_path / "tmp"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    _check_datagen(name, PROBLEMS[name], tmp_dir, tmp_path / "data")


@pytest.mark.parametrize("name", sorted(EXPECTED["tasks"]))
def test_wiki_vocab_tasks_write_what_t2t_1_15_7_writes(name, tmp_path):
    """CNN/DM (a fraction too, shuffled by the seeded ``random``) and MultiNLI with the wiki
    model's vocabulary (built from the wiki files); SNLI's own under the wiki file's name."""
    tmp_dir = tmp_path / "tmp"
    tmp_dir.mkdir()
    for path in (REFERENCE / "tmp").glob("*wiki_*"):
        shutil.copy(path, tmp_dir)
    for path in TASK_INPUTS[next(k for k in TASK_INPUTS if name.startswith(k))]:
        shutil.copy(path, tmp_dir)
    _check_datagen(name, EXPECTED["tasks"][name], tmp_dir, tmp_path / "data")


def _check_datagen(name: str, want: dict, tmp_dir: Path, data_dir: Path) -> None:
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    vocab = data_dir / want["hparams"]["vocab_filename"]
    assert hashlib.sha256(vocab.read_bytes()).hexdigest() == want["vocab_sha256"]
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard, None) == (count, want["records_sha256"][shard]), shard
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]
    assert problem_facts(t2t_registry.problem(name), data_dir) == want["hparams"]


def test_the_other_wiki_vocab_tasks_are_t2ts():
    """Their vocabulary files, splits and dataset files as T2T's (cnn_dailymail.py,
    multinli.py, stanford_nli.py, squad.py); the fractions as T2T's."""
    en32, en64 = (
        "vocab.languagemodel_en_wiki32k.32000.subwords",
        "vocab.languagemodel_en_wiki64k.64000.subwords",
    )
    multi = "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"
    vocab = {
        "summarize_cnn_dailymail_wiki_lm_shared_vocab64k": en64,
        "summarize_cnn_dailymail_wiki_lm_multi_vocab64k": multi,
        "summarize_frac_cnn_dailymail_wiki_lm_shared_vocab64k": en64,
        "multi_nli_wiki_lm_shared_vocab64k": en64,
        "multi_nli_wiki_lm_multi_vocab64k": multi,
        "stanford_nli_wiki_lm_shared_vocab64k": en64,
        "squad_concat_shared_vocab": en32,
        "squad_concat_multi64k": multi,
    }
    for name, filename in vocab.items():
        assert t2t_registry.problem(name).vocab_filename == filename, name
    assert t2t_registry.problem("stanford_nli_wiki_lm_shared_vocab64k").approx_vocab_size == 2**15
    fractions = {"0p1": 0.001, "1": 0.01, "2": 0.02, "5": 0.05, "10": 0.1, "20": 0.2, "50": 0.5}
    for frac, value in fractions.items():
        name = f"summarize_frac{frac}_cnn_dailymail_wiki_lm_shared_vocab64k"
        assert t2t_registry.problem(name).fraction_of_data() == value
        assert t2t_registry.problem(name).vocab_filename == en64
    for name, files in (
        ("squad_concat_shared_vocab", "squad"),
        ("squad_concat_multi64k", "squad_multi64k"),
    ):
        problem = t2t_registry.problem(name)
        assert problem.dataset_filename() == files
        assert [s["shards"] for s in problem.dataset_splits] == [100, 1]
    example = {"inputs": tf.constant([5, 6]), "context": tf.constant([7])}
    got = t2t_registry.problem("squad_concat_shared_vocab").preprocess_example(
        example, "train", None
    )
    assert sorted(got) == ["inputs"] and got["inputs"].numpy().tolist() == [5, 6, 2, 7]


@pytest.mark.parametrize("name", sorted(EXPECTED["enro_sampling"]))
def test_enro_small_and_tiny_sample_as_t2t(name, tmp_path):
    """T2T's ``random`` draws of the train pairs (seeded as t2t_datagen), a second pass when
    too few; its dev pairs all (T2T's end there, a RuntimeError on Python 3.7+: the end)."""
    shutil.copytree(REFERENCE / "tmp", tmp_path, dirs_exist_ok=True)
    problem = t2t_registry.problem(name.replace("half", "translate_enro_wmt_multi_small64k"))
    if name == "half":  # sample_prob 0.5: two passes over the pairs, kept ones from both
        problem = type("Half", (type(problem),), {"how_many_examples_to_sample": 307000})()
    for split, want in EXPECTED["enro_sampling"][name].items():
        random.seed(EXPECTED["random_seed"])
        found = [
            [s["inputs"], s["targets"]] for s in problem.generate_samples(None, tmp_path, split)
        ]
        digest = hashlib.sha256(json.dumps(found, separators=(",", ":")).encode()).hexdigest()
        assert (len(found), digest) == (want["count"], want["sha256"]), split
    assert problem.dataset_splits == [
        {"split": "train", "shards": 16},
        {"split": "eval", "shards": 1},
    ]
    assert problem.vocab_filename == "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"


def test_the_other_names_are_t2ts_problems():
    """Each of wiki_lm.py's names, its vocabulary file and corpus files as T2T's."""
    vocab = {
        "languagemodel_en_wiki64k": "vocab.languagemodel_en_wiki64k.64000.subwords",
        "languagemodel_en_wiki64k_shorter": "vocab.languagemodel_en_wiki64k.64000.subwords",
        "languagemodel_de_wiki32k": "vocab.languagemodel_de_wiki32k.32000.subwords",
        "languagemodel_de_wiki64k": "vocab.languagemodel_de_wiki64k.64000.subwords",
        "languagemodel_fr_wiki32k": "vocab.languagemodel_fr_wiki32k.32000.subwords",
        "languagemodel_fr_wiki64k": "vocab.languagemodel_fr_wiki64k.64000.subwords",
        "languagemodel_ro_wiki32k": "vocab.languagemodel_ro_wiki32k.32000.subwords",
        "languagemodel_ro_wiki64k": "vocab.languagemodel_ro_wiki64k.64000.subwords",
    }
    for name, filename in vocab.items():
        problem = t2t_registry.problem(name)
        assert problem.vocab_filename == filename
        lang = name.split("_")[1]
        assert [n for n, _ in problem.train_names_ids] == [f"{lang}wiki_train.txt.gz"]
        assert problem.max_samples_for_vocab == 128000
        assert problem.combine_characters_threshold == (3072 if "shorter" in name else 4096)
    assert isinstance(t2t_registry.problem("languagemodel_fr_wiki64k"), wiki_lm.Text2SelfProblem)
    multi = "vocab.languagemodel_de_en_fr_ro_wiki64k.64000.subwords"
    for name in ("translate_ende_wmt_multi64k", "translate_enfr_wmt_multi64k"):
        assert t2t_registry.problem(name).vocab_filename == multi
    enfr = t2t_registry.problem("translate_enfr_wmt_multi64k")
    assert not enfr.use_small_dataset  # T2T's: WMT's large EN-FR mix
    # T2T's packed one, under T2T's module (t2t_compat/packed_problems.py)
    packed = wiki_lm.LanguagemodelDeEnFrRoWiki64kFitbPacked1k
    assert packed is type(t2t_registry.problem("languagemodel_de_en_fr_ro_wiki64k_fitb_packed1k"))


def test_concat_and_mix_are_t2ts(tmp_path):
    """concat_generator drops what is too short, too long, and the file's tail;
    mix_generators deals one item of each in turn."""
    path = tmp_path / "a.txt"
    path.write_text("ab\n  cdefghij  \nklmnopqrstu\n" + "x" * 40 + "\nyz\nlast\n", "utf-8")
    got = [s["targets"] for s in wiki_lm.concat_generator(str(path), 25, 5)]
    assert got == ["ab cdefghij klmnopqrstu"]  # the 40 x's: too long; "yz last": the tail
    mixed = wiki_lm.mix_generators([iter("abc"), iter(""), iter("de")])
    assert list(mixed) == ["a", "d", "b", "e", "c"]
