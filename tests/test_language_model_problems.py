"""T2T's own language-model problems, registered with T2T's names (t2t_compat/lm_problems.py).

``languagemodel_ptb10k`` and ``languagemodel_wikitext103`` write byte for byte what T2T 1.15.7's
datagen wrote from the same stand-in archives (tests/data/t2t_lm_problems_reference, made by T2T
itself: tools/t2t_reference/make_t2t_lm_problems_reference.py); a corpus missing from --tmp_dir
is refused in one line naming the file to put there.
"""

import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.commands.builtins import register_builtins

REFERENCE = Path(__file__).resolve().parent / "data" / "t2t_lm_problems_reference"


@pytest.mark.parametrize("name", ["languagemodel_ptb10k", "languagemodel_wikitext103"])
def test_datagen_writes_what_t2t_1_15_7_writes(name, tmp_path):
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp", tmp)
    argv = [f"--problem={name}", f"--data_dir={data}", f"--tmp_dir={tmp}", "--noprogress"]
    assert datagen.main([*argv, "--num_workers=1"]) == 0
    expected = sorted(p.name for p in (REFERENCE / "data" / name).iterdir())
    written = {p.name: p.read_bytes() for p in data.iterdir()}
    assert set(written) - set(expected) <= {f"{name}.datagen.json"}
    for file in expected:  # the vocabulary and every shard: the same bytes
        assert written.get(file) == (REFERENCE / "data" / name / file).read_bytes(), file
    register_builtins()
    problem = registry.problem(name)
    assert not problem.has_inputs
    hp = problem.problem_hparams(str(data))
    assert hp["has_input"] is False and hp["input_vocab_size"] == hp["target_vocab_size"]


@pytest.mark.parametrize(
    "name, missing",
    [
        ("languagemodel_ptb10k", "simple-examples.tgz"),
        ("languagemodel_ptb_characters", "simple-examples.tgz"),
        ("languagemodel_lm1b32k", "1-billion-word-language-modeling-benchmark-r13output.tar.gz"),
        ("languagemodel_wikitext103", "wikitext-103-v1.zip"),
        ("languagemodel_wikitext103_characters", "wikitext-103-raw-v1.zip"),
        (
            "languagemodel_lm1b32k_packed",
            "1-billion-word-language-modeling-benchmark-r13output.tar.gz",
        ),
    ],
)
def test_a_missing_corpus_is_refused_in_one_line_naming_its_file(name, missing, tmp_path, capsys):
    argv = [
        f"--problem={name}",
        f"--data_dir={tmp_path}/d",
        f"--tmp_dir={tmp_path}/t",
        "--noprogress",
    ]
    assert datagen.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and missing in err, err


def test_wikitext103_characters_builds_no_word_vocabulary(tmp_path):
    """T2T's wikitext103.py counts the train file's words only for the TOKEN problem; the
    characters one wrote an unused .tokens vocabulary (reading the whole ~540 MB file)."""
    import zipfile

    tmp, data = tmp_path / "tmp", tmp_path / "data"
    tmp.mkdir()
    with zipfile.ZipFile(tmp / "wikitext-103-raw-v1.zip", "w") as archive:
        for kind in ("train", "valid", "test"):
            archive.writestr(f"wikitext-103-raw/wiki.{kind}.raw", f" = {kind} = \n a b c .\n")
    name = "languagemodel_wikitext103_characters"
    argv = [f"--problem={name}", f"--data_dir={data}", f"--tmp_dir={tmp}", "--noprogress"]
    assert datagen.main(argv) == 0
    assert not list(data.glob("*.tokens")) and list(data.glob(f"{name}-train-*"))


def test_wikitext103_l4k_joins_lines_into_examples_as_t2t(tmp_path):
    """T2T's languagemodel_wikitext103_l4k with examples of up to 30 words (a subclass, in the
    reference too: 4,096 would join these corpora's lines into none)."""
    register_builtins()
    base = type(registry.problem("languagemodel_wikitext103_l4k"))
    assert base.sequence_length.fget(None) == 4096
    assert registry.problem("languagemodel_wikitext103_l16k").sequence_length == 16384
    short = type("Short", (base,), {"sequence_length": 30})
    short.name = "languagemodel_wikitext103_l4k"
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp", tmp)
    short().generate_data(str(data), str(tmp), 1, progress=False)  # seeded as t2t-datagen
    reference = REFERENCE / "data" / "languagemodel_wikitext103_l4k_30"
    for file in sorted(p.name for p in reference.iterdir()):
        assert (data / file).read_bytes() == (reference / file).read_bytes(), file
