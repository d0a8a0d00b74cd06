"""T2T 1.15's Wikipedia language models under T2T's names (``t2t_compat/wiki_lm.py``):
datagen writes what T2T 1.15.7's writes on the same synthetic ``*wiki_*.txt.gz`` files (the
vocabulary, every shard's records' ids, the ``.txt`` files gunzipped beside them), and the
problem hparams are T2T's (tests/data/t2t_wiki_lm_reference, made by T2T itself:
tools/t2t_reference/make_t2t_wiki_lm_reference.py)."""

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest

import t2t_repro.t2t_compat.wiki_lm as wiki_lm
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.hparam import HParams
from tests.t2t_records import ids_digest

REFERENCE = Path(__file__).parent / "data" / "t2t_wiki_lm_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_wiki_lm.json").read_text(encoding="utf-8"))
PROBLEMS = EXPECTED["problems"]


def _facts(problem, data_dir: Path) -> dict:
    hp = problem.get_hparams(HParams(data_dir=str(data_dir)))
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_filename": problem.vocab_filename,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
    }


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_datagen_writes_what_t2t_1_15_7_writes(name, tmp_path):
    want = PROBLEMS[name]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    vocab = data_dir / want["hparams"]["vocab_filename"]
    assert hashlib.sha256(vocab.read_bytes()).hexdigest() == want["vocab_sha256"]
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard, None) == (count, want["records_sha256"][shard]), shard
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]
    assert _facts(t2t_registry.problem(name), data_dir) == want["hparams"]


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
    with pytest.raises(Exception, match="LanguagemodelDeEnFrRoWiki64kFitbPacked1k") as e:
        wiki_lm.LanguagemodelDeEnFrRoWiki64kFitbPacked1k  # noqa: B018  (packed: refused)
    assert "\n" not in str(e.value)


def test_concat_and_mix_are_t2ts(tmp_path):
    """concat_generator drops what is too short, too long, and the file's tail;
    mix_generators deals one item of each in turn."""
    path = tmp_path / "a.txt"
    path.write_text("ab\n  cdefghij  \nklmnopqrstu\n" + "x" * 40 + "\nyz\nlast\n", "utf-8")
    got = [s["targets"] for s in wiki_lm.concat_generator(str(path), 25, 5)]
    assert got == ["ab cdefghij klmnopqrstu"]  # the 40 x's: too long; "yz last": the tail
    mixed = wiki_lm.mix_generators([iter("abc"), iter(""), iter("de")])
    assert list(mixed) == ["a", "d", "b", "e", "c"]
