"""``--problem=wsj_parsing`` is T2T 1.15.7's ``WsjParsing`` (t2t_compat/wsj_parsing.py): its
datagen writes what T2T's writes, byte for byte (tests/data/t2t_wsj_parsing_reference, made by
T2T itself: tools/t2t_reference/make_t2t_wsj_parsing_reference.py); the paper's parser of the
treebank's .mrg files is ``wsj_parsing_ldc``, and a data dir of the project's former
``wsj_parsing`` is refused in one line naming it."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat import wsj_parsing

REFERENCE = Path(__file__).resolve().parent / "data" / "t2t_wsj_parsing_reference"
SUMMARY = json.loads((REFERENCE / "t2t_1.15.7_datagen.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("wsj")
    shutil.copytree(REFERENCE / "tmp", root / "tmp")
    argv = ["--problem=wsj_parsing", f"--data_dir={root / 'data'}", f"--tmp_dir={root / 'tmp'}"]
    assert datagen.main([*argv, "--noprogress"]) == 0
    return root


def test_datagen_writes_byte_for_byte_what_t2t_1_15_7_writes(generated):
    data = generated / "data"
    written = {
        p.name: p.read_bytes() for p in data.iterdir() if p.name != "wsj_parsing.datagen.json"
    }
    expected = SUMMARY["files"]
    assert sorted(written) == sorted(expected)
    for name, want in expected.items():
        got = written[name]
        assert (hashlib.sha256(got).hexdigest(), len(got)) == (want["sha256"], want["bytes"]), name
    vocab = REFERENCE / "data" / "vocab.wsj_parsing.32768.subwords"
    assert written[vocab.name] == vocab.read_bytes()
    # T2T reads the vocabulary's text up to max_samples_for_vocab (1,000) lines: the 30 lines
    # past it, of words seen nowhere else, are not in it.
    text = (REFERENCE / "tmp" / "wsj.train.text.txt").read_text("utf-8").splitlines()
    assert len(text) == 1030 and "zephyr" in text[-1] and b"zephyr" not in written[vocab.name]


def test_the_problem_is_t2ts(generated):
    problem = registry.problem("wsj_parsing")
    assert type(problem) is wsj_parsing.WsjParsing
    data_dir = str(generated / "data")
    hp = problem.problem_hparams(data_dir)
    want = SUMMARY["problem_hparams"]
    assert hp["target_space_id"] == want["target_space_id"]
    assert problem.vocab_sizes(data_dir) == tuple(want["vocab_size"][k] for k in want["modality"])
    assert problem.eval_metrics() == SUMMARY["eval_metrics"]  # T2T's method
    encoders = problem.get_encoders(data_dir)
    for split in ("train", "dev"):
        for example in SUMMARY["splits"][split]["first_examples"]:
            assert encoders["inputs"].decode(example["inputs_ids"][:-1]) == example["inputs"]
            assert encoders["targets"].decode(example["targets_ids"][:-1]) == example["targets"]
    # The dev split's texts (what t2t-decoder decodes without --decode_from_file), in file
    # order where the shard is shuffled.
    sources, targets = problem.source_lines(str(generated / "tmp"), "dev")
    assert len(sources) == SUMMARY["splits"]["dev"]["examples"]
    for example in SUMMARY["splits"]["dev"]["first_examples"]:
        assert (example["inputs"], example["targets"]) in zip(sources, targets, strict=True)


def test_words_and_tags_as_t2t_reads_a_tree():
    tree = "(TOP (S (NP (NNP John)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .)))"
    assert wsj_parsing.words_and_tags_from_wsj_tree(tree + "\n") == (
        "John saw a dog .",
        "S NP NNP /NP VP VBD NP DT NN /NP /VP . /S",
    )
    with pytest.raises(AssertionError):  # T2T's assert fails on a word outside a bracket
        wsj_parsing.words_and_tags_from_wsj_tree("(TOP (S word (NN x)))")
    with pytest.raises(AssertionError, match="Vocabulary generation not implemented"):
        wsj_parsing.parsing_token_generator(None, None, True, 1, 1)  # T2T's stub


def test_wrong_inputs_are_one_line_naming_what_to_do(tmp_path):
    problem = registry.problem("wsj_parsing")
    with pytest.raises(
        DataError, match="wsj.train.text.txt not found.*wsjTrain.trees.*wsj_parsing_ldc"
    ) as e:
        problem.generate_data(str(tmp_path / "data"), str(tmp_path), progress=False)
    assert "\n" not in str(e.value)
    (tmp_path / "wsjEval.trees").write_text("(TOP (S (NN a)))\n(TOP (S word (NN x)))\n")
    with pytest.raises(DataError, match=r"wsjEval.trees:2: .*'word'"):
        list(problem.generate_samples(None, str(tmp_path), "dev"))
    # A data dir of the project's former wsj_parsing (the paper's problem) is named as such.
    old = tmp_path / "old"
    old.mkdir()
    (old / "vocab.wsj_parsing.targets.tokens").write_text("<pad>\n")
    for call in (
        lambda: problem.get_encoders(str(old)),
        lambda: problem.generate_data(str(old), str(tmp_path), progress=False),
    ):
        with pytest.raises(DataError, match="former wsj_parsing.*--problem=wsj_parsing_ldc"):
            call()
