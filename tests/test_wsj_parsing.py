"""The WSJ parsing problems: split discovery (LDC layout, NLTK sample zip), datagen, gold files."""

from __future__ import annotations

import glob
import os
import zipfile
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.builtin.problems.wsj_parsing import WsjParsingLdc  # noqa: F401  (registers the problems)
from t2t_repro.data import records
from t2t_repro.data.text_files import DataError
from t2t_repro.parsing import wsj_splits
from t2t_repro.parsing.tree_files import TreeReadStats
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

PTB_SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "ptb_sample" / "treebank.zip"

TRAIN_MRG = "( (S \n    (NP-SBJ (DT The) (NN cat{s}) )\n    (VP (VBD sat) )\n    (. .) ))\n"
DEV_MRG = (
    "( (S \n    (NP-SBJ-1 (PRP He) )\n    (VP (VBD left) \n"
    "      (NP (-NONE- *T*-1) ))\n    (. .) ))\n"
)
TEST_MRG = (
    "( (S (NP-SBJ (NNP Rome) ) (VP (VBZ waits) ) (. .) ))\n"
    "( (S \n    (NN a b) ))\n"  # malformed: two words in one bracket (file line 2)
    "( (FRAG (-LRB- -LRB-) (NP (NNS dogs) ) (-RRB- -RRB-) ))\n"
)
# Expected by hand: traces, function tags and the empty root removed; T2T linearisation.
DEV_TREE = "(S (NP (PRP He)) (VP (VBD left)) (. .))"
TEST_TREES = [
    "(S (NP (NNP Rome)) (VP (VBZ waits)) (. .))",
    "(FRAG (-LRB- -LRB-) (NP (NNS dogs)) (-RRB- -RRB-))",
]
TEST_PAIRS = [
    ("Rome waits .", "S NP NNP /NP VP VBZ /VP . /S"),
    ("-LRB- dogs -RRB-", "FRAG -LRB- NP NNS /NP -RRB- /FRAG"),
]


def make_ldc(root: Path) -> Path:
    """A miniature LDC tree: one file per section 00-24 under parsed/mrg/wsj/SS/."""
    for section in range(25):
        folder = root / "parsed" / "mrg" / "wsj" / f"{section:02d}"
        folder.mkdir(parents=True)
        text = {22: DEV_MRG, 23: TEST_MRG}.get(section, TRAIN_MRG.format(s=section))
        (folder / f"wsj_{section:02d}01.mrg").write_text(text)
    return root


def decoded(problem, data_dir, split):
    enc = problem.get_encoders(str(data_dir))
    out = []
    for path in glob.glob(problem.filepattern(str(data_dir), split)):
        for ex in records.read_examples(path):
            assert ex["inputs"][-1] == EOS_ID and ex["targets"][-1] == EOS_ID
            out.append(
                (enc["inputs"].decode(ex["inputs"][:-1]), enc["targets"].decode(ex["targets"][:-1]))
            )
    return sorted(out)


def test_registration_and_settings():
    for name in ("wsj_parsing_ldc", "wsj_parsing_ptb_sample", "wsj_parsing_semisup"):
        p = registry.problem(name)
        assert p.name == name and p.decode_defaults == {
            "beam_size": 21,
            "alpha": 0.3,
            "extra_length": 300,
            "tree_constraint": True,
            "tree_renormalize": False,
        }
        assert "bleu" not in p.eval_metrics and "parse_f1" in p.eval_metrics
    p = registry.problem("wsj_parsing_ldc")
    assert p.vocab_filename == "vocab.wsj_parsing_ldc.inputs.16384.subwords"
    assert p.target_vocab_filename == "vocab.wsj_parsing_ldc.targets.tokens"
    semisup = registry.problem("wsj_parsing_semisup")
    assert semisup.vocab_filename == "vocab.wsj_parsing_semisup.inputs.32768.subwords"


def test_ldc_split_sections(tmp_path):
    files = wsj_splits.find_mrg_files(str(make_ldc(tmp_path)))
    assert wsj_splits.detect_layout(files) == wsj_splits.LDC
    sections = {
        split: [f.section for f in wsj_splits.split_files(files, split, wsj_splits.LDC)]
        for split in ("train", "dev", "test")
    }
    assert sections == {"train": list(range(2, 22)), "dev": [22], "test": [23]}
    os.remove(tmp_path / "parsed" / "mrg" / "wsj" / "22" / "wsj_2201.mrg")
    with pytest.raises(DataError, match="section\\(s\\) 22"):
        wsj_splits.split_trees(str(tmp_path), "dev")


def test_datagen_on_a_small_ldc_tree(tmp_path, capsys):
    tmp_dir, data_dir = make_ldc(tmp_path / "raw"), tmp_path / "data"
    problem = registry.problem("wsj_parsing_ldc")
    summary = problem.generate_data(str(data_dir), str(tmp_dir), progress=False)
    assert summary.pairs == {"train": 20, "dev": 1, "test": 2} and summary.vocab_built
    err = capsys.readouterr().err
    assert f"{tmp_dir}/parsed/mrg/wsj/23/wsj_2301.mrg:2: malformed tree skipped" in err
    assert decoded(problem, data_dir, "test") == sorted(TEST_PAIRS)
    assert decoded(problem, data_dir, "dev") == [("He left .", "S NP PRP /NP VP VBD /VP . /S")]
    train = decoded(problem, data_dir, "train")
    assert train == sorted(
        (f"The cat{s} sat .", "S NP DT NN /NP VP VBD /VP . /S") for s in range(2, 22)
    )
    assert (data_dir / "wsj_parsing_ldc.test.trees").read_text().splitlines() == TEST_TREES
    assert (data_dir / "wsj_parsing_ldc.test.words").read_text().splitlines() == [
        p[0] for p in TEST_PAIRS
    ]
    assert (data_dir / "wsj_parsing_ldc.dev.trees").read_text().splitlines() == [DEV_TREE]
    sizes = problem.vocab_sizes(str(data_dir))
    assert sizes[0] != sizes[1]  # separate source and target vocabularies
    # One target id per label, closer and tag (the tree constraint needs it).
    targets = problem.get_encoders(str(data_dir))["targets"]
    assert [len(targets.encode(t)) for t in "S /S NP /NP , . -LRB- -RRB- PRP$ ''".split()] == [
        1
    ] * 10
    assert targets.decode(targets.encode(TEST_PAIRS[1][1])) == TEST_PAIRS[1][1]
    assert problem.source_lines(str(tmp_dir), "test") == (
        [p[0] for p in TEST_PAIRS],
        [p[1] for p in TEST_PAIRS],
    )
    assert [t.to_string() for t in problem.gold_trees(str(tmp_dir), "dev")] == [DEV_TREE]
    again = problem.generate_data(str(data_dir), str(tmp_dir), progress=False)
    assert not again.vocab_built and again.pairs == summary.pairs


def test_max_cases_trial_then_full_run_rebuilds_the_vocabs(tmp_path):
    tmp_dir, data_dir = make_ldc(tmp_path / "raw"), str(tmp_path / "data")
    problem = registry.problem("wsj_parsing_ldc")
    trial = problem.generate_data(data_dir, str(tmp_dir), max_cases=3, progress=False)
    assert trial.pairs == {"train": 3, "dev": 1, "test": 2} and trial.vocab_built
    full = problem.generate_data(data_dir, str(tmp_dir), progress=False)
    assert full.pairs == {"train": 20, "dev": 1, "test": 2} and full.vocab_built


def test_missing_data_and_vocab_errors(tmp_path):
    problem = registry.problem("wsj_parsing_ldc")
    with pytest.raises(DataError, match="t2t-datagen --problem=wsj_parsing_ldc "):
        problem.get_encoders(str(tmp_path))
    with pytest.raises(DataError, match="wsj_NNNN.mrg"):
        problem.generate_data(str(tmp_path / "d"), str(tmp_path), progress=False)
    with pytest.raises(DataError, match="semisup"):
        registry.problem("wsj_parsing_semisup").generate_data(
            str(tmp_path / "d"), str(make_ldc(tmp_path / "raw")), progress=False
        )


def test_semisup_adds_extra_trees(tmp_path):
    tmp_dir = make_ldc(tmp_path / "raw")
    (tmp_dir / "semisup").mkdir()
    (tmp_dir / "semisup" / "extra.trees").write_text(
        "(TOP (S (NP (NNS Birds)) (VP (VBP sing))))\n(S (NN x y))\n"
    )
    problem = registry.problem("wsj_parsing_semisup")
    problem.num_shards = {
        "train": 2,
        "dev": 1,
        "test": 1,
    }  # this instance only (registry gives fresh ones)
    summary = problem.generate_data(str(tmp_path / "data"), str(tmp_dir), progress=False)
    assert summary.pairs == {"train": 21, "dev": 1, "test": 2}
    assert ("Birds sing", "S NP NNS /NP VP VBP /VP /S") in decoded(
        problem, tmp_path / "data", "train"
    )


def _sample_zip(path: Path, numbers) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("treebank/combined/README", "not a tree file")
        for n in numbers:
            z.writestr(f"treebank/combined/wsj_{n:04d}.mrg", TRAIN_MRG.format(s=n))


def test_sample_layout_from_zip_and_extracted_folder(tmp_path, capsys):
    _sample_zip(tmp_path / "treebank.zip", [1, 179, 180, 189, 190, 199])
    files = wsj_splits.find_mrg_files(str(tmp_path))
    assert wsj_splits.detect_layout(files) == wsj_splits.PTB_SAMPLE
    words = {
        split: [t.words()[1] for t in wsj_splits.split_trees(str(tmp_path), split)]
        for split in ("train", "dev", "test")
    }
    assert words == {
        "train": ["cat1", "cat179"],
        "dev": ["cat180", "cat189"],
        "test": ["cat190", "cat199"],
    }
    # An extracted copy on disk wins over the zip's member of the same number.
    folder = tmp_path / "treebank" / "combined"
    folder.mkdir(parents=True)
    (folder / "wsj_0190.mrg").write_text(TRAIN_MRG.format(s="X"))
    assert [t.words()[1] for t in wsj_splits.split_trees(str(tmp_path), "test")] == [
        "catX",
        "cat199",
    ]
    # wsj_parsing_ldc falls back to the sample split and says so.
    pairs = registry.problem("wsj_parsing_ldc").source_lines(str(tmp_path), "train")
    assert pairs[0] == ["The cat1 sat .", "The cat179 sat ."]
    assert "only the NLTK sample" in capsys.readouterr().err


def test_real_ptb_sample_split():
    if not PTB_SAMPLE.is_file():
        pytest.skip(f"{PTB_SAMPLE} is absent (shared fixture data; see ../shared/data/README.md)")
    root = str(PTB_SAMPLE.parent)
    files = wsj_splits.find_mrg_files(root)
    assert [f.number for f in files] == list(range(1, 200))
    assert wsj_splits.detect_layout(files) == wsj_splits.PTB_SAMPLE
    assert [f.number for f in wsj_splits.split_files(files, "dev", wsj_splits.PTB_SAMPLE)] == list(
        range(180, 190)
    )
    chosen = {
        s: wsj_splits.split_files(files, s, wsj_splits.PTB_SAMPLE) for s in ("train", "dev", "test")
    }
    assert sorted(f.number for fs in chosen.values() for f in fs) == list(
        range(1, 200)
    )  # a partition
    stats = TreeReadStats()
    per_split = [len(list(wsj_splits.iter_raw_trees(fs, stats))) for fs in chosen.values()]
    assert stats.malformed == 0 and stats.trees == sum(per_split) and min(per_split) > 100


def test_dev_f1_of_an_untrained_model_scores_every_sentence(tmp_path):
    """The dev metric's decodes use the tree constraint: even an untrained model's output is a
    tree over the right words, so strict EVALB has no error sentence."""
    import keras

    from t2t_repro.training.loop.dev_decodes import make_dev_decodes
    from tests.model_utils import build_model

    tmp_dir, data_dir = make_ldc(tmp_path / "raw"), str(tmp_path / "data")
    problem = registry.problem("wsj_parsing_ldc")
    problem.generate_data(data_dir, str(tmp_dir), progress=False)
    keras.utils.set_random_seed(1)
    sizes = problem.vocab_sizes(data_dir)
    model = build_model(
        "transformer_tiny",
        "hidden_size=32,filter_size=48,num_heads=4,num_hidden_layers=1",
        vocab_size=sizes[0],
        target_vocab_size=sizes[1],
    )
    decodes = make_dev_decodes(model, problem, data_dir, model.hparams, 10)
    result = decodes()
    assert tuple(result) == decodes.metric.names  # what --eval_early_stopping_metric accepts
    assert result["parse_error_sentences"] == 0 and result["parse_repaired_outputs"] == 0
    assert result["parse_valid_sentences"] == 1 and 0.0 <= result["parse_f1"] <= 100.0
    os.remove(problem.gold_file(data_dir, "dev", "words"))
    with pytest.raises(DataError, match="rerun t2t-datagen"):
        make_dev_decodes(model, problem, data_dir, model.hparams, 10)


def test_constraint_limits_come_from_the_training_trees_with_a_fallback(tmp_path):
    from t2t_repro.decoding.line_decoder import decode_hparams
    from t2t_repro.parsing.tree_constraint import MAX_OPEN_RUN, MAX_SAME_LABEL_RUN, run_limits

    assert run_limits(["S VP VP VP VBD /VP /VP /VP NP NN /NP /S"]) == {
        "max_open_run": 4,  # S VP VP VP
        "max_same_label_run": 3,  # VP VP VP
    }
    # 1 run in 2,000 longer than 2 is cut off (1 in 500 is not).
    runs = ["S NP NN /NP /S"] * 1999
    assert run_limits([*runs, "S S S NN /S /S /S"])["max_open_run"] == 2
    assert run_limits([*runs[:499], "S S S NN /S /S /S"])["max_open_run"] == 3
    assert run_limits([]) == {
        "max_open_run": MAX_OPEN_RUN,
        "max_same_label_run": MAX_SAME_LABEL_RUN,
    }

    tmp_dir, data_dir = make_ldc(tmp_path / "raw"), str(tmp_path / "data")
    problem = registry.problem("wsj_parsing_ldc")
    problem.generate_data(data_dir, str(tmp_dir), progress=False)
    limits = run_limits(problem.source_lines(str(tmp_dir), "train")[1])
    assert problem.constraint_limits(data_dir) == limits
    dhp = decode_hparams("", problem.decode_defaults)
    constraint = problem.search_constraint(data_dir, dhp)
    assert (constraint.max_open_run, constraint.max_same_label_run) == (
        limits["max_open_run"],
        limits["max_same_label_run"],
    )
    os.remove(problem.constraint_limits_path(data_dir))  # a data dir made before the limits
    constraint = problem.search_constraint(data_dir, dhp)
    assert (constraint.max_open_run, constraint.max_same_label_run) == (4, 3)
