"""T2T 1.15.7's transduction, copyable-tokens, subject-verb agreement, style transfer, MS COCO
paraphrase and CoNLL 2002 problems under T2T's names: datagen writes what T2T 1.15.7's writes
from the same files (the transduction ones, seeded as t2t-datagen seeds, T2T's random draws),
with T2T's problem hparams and metrics (tests/data/t2t_text_tasks_reference, made by T2T itself:
tools/t2t_reference/make_t2t_text_tasks_reference.py)."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat import (
    conll_ner,
    paraphrase_ms_coco,
    pointer_generator_word,
    style_transfer,
    subject_verb_agreement,
    transduction_problems,
)
from t2t_repro.t2t_compat.problem import T2TProblemError, default_model_hparams
from tests.t2t_records import record_ids

REFERENCE = Path(__file__).parent / "data" / "t2t_text_tasks_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_text_tasks.json").read_text(encoding="utf-8"))
EXPECTED = SUMMARY["problems"]
MODULES = {
    module.__name__.rsplit(".", 1)[-1]: module.T2T_REGISTERED_PROBLEMS
    for module in (
        transduction_problems,
        pointer_generator_word,
        subject_verb_agreement,
        style_transfer,
        paraphrase_ms_coco,
        conll_ner,
    )
}
TRANSDUCTION = MODULES["transduction_problems"]


@pytest.fixture(autouse=True)
def _registered():
    """The classes registered again, should a test before have restored the registry."""
    for classes in MODULES.values():
        for cls in classes:
            registry.register_problem(cls.problem_name)(cls)


def _digest(value) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _small(name: str):
    """The transduction problem with the reference's sample count (T2T draws 10^5 or 10^6)."""
    base = type(registry.problem(name))
    count = SUMMARY["small_samples"]
    cls = type("Small" + base.__name__, (base,), {"num_samples": lambda self, split: count})
    cls.name = name
    return cls()


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if "error" not in EXPECTED[n]))
def test_datagen_samples_and_hparams_are_t2t_1_15_7s(name, tmp_path):
    want = EXPECTED[name]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    transduction = name in {cls.problem_name for cls in TRANSDUCTION}
    if transduction:  # as t2t-datagen calls it: seeded with --random_seed's default
        problem = _small(name)
        problem.generate_data(str(data_dir), str(tmp_dir), None)
    else:
        argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
        assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
        problem = registry.problem(name)

    shards = sorted(
        f"{name}-{split}-{i:05d}-of-{len(counts):05d}"
        for split, counts in want["shard_records"].items()
        for i in range(len(counts))
    )
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == sorted([*want["other_files"], *shards])
    if want["vocab_file"]:
        vocab = (data_dir / want["vocab_file"]).read_bytes()
        assert hashlib.sha256(vocab).hexdigest() == want["vocab_sha256"]
    written = {shard: record_ids(data_dir / shard, None) for shard in shards}
    assert {s: _digest(r) for s, r in written.items()} == want["records_sha256"]
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]
    for split, facts in want.get("samples", {}).items():
        samples = list(problem.generate_samples(str(data_dir), str(tmp_dir), split))
        assert (len(samples), samples[0]) == (facts["count"], facts["first"]), split
        assert _digest(samples) == facts["sha256"], split

    model_hparams = default_model_hparams()
    model_hparams.data_dir = str(data_dir)
    hp = registry.problem(name).get_hparams(model_hparams)
    got = {key: hp.get(key) for key in want["problem_hparams"]}
    assert {**got, "modality": dict(hp.modality), "vocab_size": dict(hp.vocab_size)} == want[
        "problem_hparams"
    ]
    assert type(registry.problem(name)).__name__ == want["class"]
    assert problem.eval_metrics() == want["eval_metrics"]
    assert problem.vocab_type == want["vocab_type"]
    assert [dict(s) for s in problem.dataset_splits] == want["dataset_splits"]
    if "num_classes" in want:
        assert problem.num_classes == want["num_classes"]
        assert problem.class_labels(str(data_dir)) == want["class_labels"]
    assert registry.problem(name).problem_hparams(str(data_dir))  # what the trainer asks


def test_conll2002_ner_is_t2ts_base_and_refused_in_one_line(tmp_path, capsys):
    assert EXPECTED["conll2002_ner"]["error"] == "NotImplementedError"  # T2T's datagen
    argv = ["--problem=conll2002_ner", f"--tmp_dir={REFERENCE / 'tmp'}"]
    assert datagen.main([*argv, f"--data_dir={tmp_path}", "--offline", "--noprogress"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.endswith("use conll2002_es_ner or conll2002_nl_ner.") and "\n" not in err
    assert not list(tmp_path.glob("conll2002_ner-*"))
    with pytest.raises(T2TProblemError, match="names no files"):
        registry.problem("conll2002_ner").generate_data(str(tmp_path), str(REFERENCE / "tmp"))


def test_the_names_and_classes_are_t2ts():
    for module, names in SUMMARY["registered"].items():
        assert sorted(cls.problem_name for cls in MODULES[module]) == names, module
        for name in names:
            assert type(registry.problem(name)).__name__ == EXPECTED[name]["class"]
    assert isinstance(registry.problem("copy_sequence_small"), transduction_problems.CopySequence)
    assert isinstance(registry.problem("conll2002_nl_ner"), conll_ner.Conll2002Ner)
    # T2T's transduction problems ignore _rev: the variant is the problem itself
    assert not registry.problem("reverse_sequence_rev")._was_reversed


def test_token_text_encoder_oov_numbers_source_oovs_past_the_vocabulary():
    encoder = pointer_generator_word.TokenTextEncoderOov(
        None, vocab_list=["<UNK>", "a", "b"], replace_oov="<UNK>"
    )
    ids, extended, oovs, order = encoder.encode("a zz b yy zz")
    assert (ids, extended, oovs, order) == (
        [3, 2, 4, 2, 2],
        [3, 5, 4, 6, 5],
        {"zz": 0, "yy": 1},
        ["zz", "yy"],
    )
    assert encoder.encode_target("yy a qq", oovs) == ([2, 3, 2], [6, 3, 2])
    assert encoder.decode_oov([3, 6, 5], order) == "a yy zz"


def test_get_hparams_without_a_data_dir_is_one_line():
    """T2T's os.path.join(None, vocab_filename) is a TypeError; here one line naming the file."""
    from t2t_repro.t2t_compat.problem import T2TProblemError

    with pytest.raises(T2TProblemError, match="none was given: pass data_dir") as e:
        registry.problem("style_transfer_modern_to_shakespeare").get_hparams()
    assert "\n" not in str(e.value)
