"""T2T 1.15.7's sentiment and GLUE-style classification problems (imdb, sst_binary, yelp_polarity,
yelp_full, cola, mrpc, qnli, quora_qpairs, rte, scitail, stanford_nli, multinli, wnli) under
T2T's names: datagen writes what T2T 1.15.7's writes from the same corpus files, and each
problem's samples, problem hparams and metrics are T2T's (tests/data/t2t_classification_reference,
made by T2T itself: tools/t2t_reference/make_t2t_classification_reference.py)."""

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.errors import DataError
from t2t_repro.t2t_compat import glue_problems, sentiment_problems
from t2t_repro.t2t_compat.problem import T2TProblemError, default_model_hparams
from t2t_repro.t2t_compat.text2text_problem import Text2TextProblem
from t2t_repro.t2t_compat.text_kinds import Text2ClassProblem, TextConcat2ClassProblem
from tests.t2t_records import record_ids

REFERENCE = Path(__file__).parent / "data" / "t2t_classification_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_classification.json").read_text(encoding="utf-8"))
EXPECTED = SUMMARY["problems"]
LM1B_VOCAB = "vocab.languagemodel_lm1b32k.32768.subwords"
# T2T's names of these modules provided elsewhere: packed (t2t_compat/packed_problems.py).
ELSEWHERE = {"multi_nli_text2text_multi64k_packed1k"}
# T2T's classifiers on a Wikipedia language model's vocabulary: checked in test_t2t_wiki_lm.py
WIKI_LM_VOCAB = {
    "multi_nli_wiki_lm_multi_vocab64k",
    "multi_nli_wiki_lm_shared_vocab",
    "multi_nli_wiki_lm_shared_vocab64k",
    "stanford_nli_wiki_lm_shared_vocab",
    "stanford_nli_wiki_lm_shared_vocab64k",
}
MODULES = {**sentiment_problems.T2T_MODULES, **glue_problems.T2T_MODULES}
SPLITS = {"train": "train", "dev": "eval", "test": "test"}


@pytest.fixture(autouse=True)
def _registered():
    """The classes registered again, should a test before have restored the registry."""
    for classes in MODULES.values():
        for cls in classes:
            registry.register_problem(cls.problem_name)(cls)


def _digest(value) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_datagen_samples_and_hparams_are_t2t_1_15_7s(name, tmp_path):
    want = EXPECTED[name]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    if name == "multi_nli_shared_vocab":  # LM1B's vocabulary, in --data_dir as a user's
        data_dir.mkdir()
        shutil.copy(REFERENCE / "vocab" / "sci_tail_shared_vocab" / LM1B_VOCAB, data_dir)
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0

    shards = {
        f"{name}-{split}-{i:05d}-of-{len(counts):05d}": split
        for split, counts in want["shard_records"].items()
        for i in range(len(counts))
    }
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == sorted([*want["other_files"], *shards])
    if want["vocab_file"]:
        vocab = (data_dir / want["vocab_file"]).read_bytes()
        assert hashlib.sha256(vocab).hexdigest() == want["vocab_sha256"]
    written = {shard: record_ids(data_dir / shard) for shard in sorted(shards)}
    counts = {split: [len(written[s]) for s in written if shards[s] == split] for split in SPLITS}
    assert {k: v for k, v in counts.items() if v} == want["shard_records"]
    problem = registry.problem(name)
    for split, facts in want["splits"].items():
        samples = list(problem.generate_samples(str(data_dir), str(tmp_dir), SPLITS[split]))
        records = sorted(r for s, rs in written.items() if shards[s] == split for r in rs)
        assert _digest(records) == facts["sorted_records_sha256"], split
        if name.startswith("sentiment_imdb"):  # read in os.listdir order, as T2T: the FS's
            by_text = sorted(json.dumps(s, sort_keys=True) for s in samples)
            assert _digest(by_text) == facts["sorted_samples_sha256"], split
        else:
            assert samples[0] == facts["first_sample"]
            assert _digest(samples) == facts["samples_sha256"], split
    if not name.startswith("sentiment_imdb"):
        assert _digest(written) == want["records_sha256"]  # T2T's shuffle, shard by shard
    assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]

    model_hparams = default_model_hparams()
    model_hparams.data_dir = str(data_dir)
    hp = problem.get_hparams(model_hparams)
    got = {key: hp.get(key) for key in want["problem_hparams"]}
    assert {**got, "modality": dict(hp.modality), "vocab_size": dict(hp.vocab_size)} == want[
        "problem_hparams"
    ]
    assert type(problem).__name__ == want["class"]
    assert problem.eval_metrics() == want["eval_metrics"]
    assert (problem.vocab_type, problem.approx_vocab_size) == (
        want["vocab_type"],
        want["approx_vocab_size"],
    )
    assert [dict(s) for s in problem.dataset_splits] == want["dataset_splits"]
    assert problem.task_id == want["task_id"]
    if "num_classes" in want:
        assert problem.num_classes == want["num_classes"]
        assert problem.class_labels(str(data_dir)) == want["class_labels"]
    if name.startswith("sentiment_yelp"):  # T2T's labels 1..N of N classes: one line
        with pytest.raises(T2TProblemError, match=r"label \d is out of range") as refused:
            registry.problem(name).problem_hparams(str(data_dir))
        assert "\n" not in str(refused.value)
    else:
        assert registry.problem(name).problem_hparams(str(data_dir))  # what the trainer asks


def test_the_names_and_classes_are_t2ts():
    from t2t_repro.t2t_compat import aliases

    assert aliases.install()
    from tensor2tensor.data_generators import problem  # a usr_dir's character problem's id

    assert problem.TaskID.EN_NLI == EXPECTED["rte_characters"]["task_id"]
    for module, names in SUMMARY["registered"].items():
        provided = sorted(cls.problem_name for cls in MODULES[module])
        assert provided == sorted(set(names) - ELSEWHERE), module
        here = {cls.__name__ for cls in MODULES[module] if cls.problem_name not in WIKI_LM_VOCAB}
        assert here == {EXPECTED[n]["class"] for n in provided if n not in WIKI_LM_VOCAB}
    assert sorted(EXPECTED) == sorted(
        n for ns in SUMMARY["registered"].values() for n in ns if n not in ELSEWHERE | WIKI_LM_VOCAB
    )
    for name in sorted(ELSEWHERE):
        assert type(registry.problem(name)).__module__.endswith("packed_problems")
    tree = {
        "sentiment_imdb_characters": sentiment_problems.SentimentIMDB,
        "sentiment_yelp_full": Text2ClassProblem,
        "cola_characters": glue_problems.Cola,
        "msr_paraphrase_corpus": TextConcat2ClassProblem,
        "multi_nli_shared_vocab": glue_problems.MultiNLI,
        "stanford_nli_shared_vocab": glue_problems.StanfordNLI,
        "multi_nli_text2text": Text2TextProblem,
    }
    for name, base in tree.items():
        assert isinstance(registry.problem(name), base), name
    assert not isinstance(
        registry.problem("sentiment_yelp_full"), sentiment_problems.SentimentYelpPolarity
    )
    assert not isinstance(registry.problem("multi_nli_text2text"), Text2ClassProblem)


def test_what_t2ts_readers_fail_on_is_one_line(tmp_path):
    rte = registry.problem("rte")
    with zipfile.ZipFile(tmp_path / "RTE.zip", "w") as z:
        z.writestr("RTE/train.tsv", "index\ts1\ts2\tlabel\n0\ta\tb\tentailment\n1\ta\tb\tmaybe\n")
        z.writestr("RTE/dev.tsv", "index\ts1\ts2\tlabel\n0\ta\tb\n")
    with pytest.raises(ValueError, match=r"train.tsv, line 3: label 'maybe' is not one of"):
        list(rte.generate_samples(None, str(tmp_path), "train"))
    with pytest.raises(ValueError, match=r"dev.tsv, line 2: 3 tab-separated fields where"):
        list(rte.generate_samples(None, str(tmp_path), "eval"))

    class Stars(sentiment_problems.SentimentYelpFull):  # its own labels: not refused
        def generate_samples(self, data_dir, tmp_dir, dataset_split):
            for sample in super().generate_samples(data_dir, tmp_dir, dataset_split):
                yield {**sample, "label": sample["label"] - 1}

    assert Stars().unsupported is None and registry.problem("sentiment_yelp_full").unsupported
    with pytest.raises(DataError) as missing:  # offline (the suite's): the zip to place
        list(registry.problem("cola").generate_samples(None, str(tmp_path / "none"), "train"))
    assert "CoLA.zip" in str(missing.value) and "\n" not in str(missing.value)
