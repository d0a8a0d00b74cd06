"""A character language model shaped like the public usr_dir
inzva/fake-academic-paper-generation (``t2t_paper_generation_problem``, run unchanged here:
docs/porting.md, "Public usr_dirs tried"). Its fixture, ``paper_chunks_usr``, is written for the
tests against T2T's API only (none of that usr_dir's code): fixed-length chunks of one text found
in --tmp_dir by ``maybe_download``, its own ``generate_encoded_samples`` without EOS, 100 + 1
shards, an ``hparams()`` hook, a package ``__init__`` importing its module by the package's
name. t2t-datagen writes byte for byte what T2T 1.15.7's datagen wrote
(tools/t2t_reference/make_t2t_usr_dir_patterns_reference.py); the model trains, evaluates and
continues a prompt."""

import re
import shutil

import pytest

from t2t_repro.commands import datagen
from tests.test_t2t_usr_dir_patterns import REFERENCE, SUMMARY, USR_DIRS, one_character_a_pad
from tests.usr_dir_registry import restored_registry

USR = "paper_chunks_usr"
PROBLEM = SUMMARY["problems"][USR]


@pytest.fixture(autouse=True)
def restore_registry():
    yield from restored_registry({USR})


def datagen_flags(data, tmp) -> list[str]:
    return [
        f"--problem={PROBLEM}",
        f"--data_dir={data}",
        f"--tmp_dir={tmp}",
        f"--t2t_usr_dir={USR_DIRS / USR}",
        "--noprogress",
        "--num_workers=1",
    ]


def test_datagen_writes_what_t2t_1_15_7_writes(tmp_path):
    tmp, data = tmp_path / "tmp", tmp_path / "data"
    shutil.copytree(REFERENCE / "tmp" / USR, tmp)
    assert datagen.main(datagen_flags(data, tmp)) == 0
    expected = SUMMARY["files"][USR]
    assert len(expected) == 101 and not [f for f in expected if "vocab" in f]  # bytes: no file
    written = {p.name: p.read_bytes() for p in data.iterdir()}
    assert set(written) - set(expected) == {f"{PROBLEM}.datagen.json"}
    for name in expected:  # every shard, the empty ones too: T2T's bytes
        assert written[name] == (REFERENCE / "data" / USR / name).read_bytes(), name
    assert sorted(p.name for p in tmp.iterdir()) == ["paper_text.txt"]  # nothing downloaded


@pytest.mark.slow  # a tiny model's training run and a decode
@pytest.mark.usefixtures("without_grappler_here")  # plumbing: tests/grappler.py
def test_it_trains_evaluates_and_continues_a_prompt(tmp_path, capsys):
    from t2t_repro.commands import decoder, trainer
    from tests.tools import TINY_PLUMBING

    flags = [
        f"--problem={PROBLEM}",
        f"--data_dir={REFERENCE / 'data' / USR}",
        f"--t2t_usr_dir={USR_DIRS / USR}",
        "--hparams_set=transformer_tiny",
    ]
    out = tmp_path / "run"
    train = [f"--hparams={TINY_PLUMBING}", f"--output_dir={out}", "--train_steps=2"]
    # T2T's ValidationMonitor evaluates every --local_eval_frequency steps only: at step 2
    every = "--local_eval_frequency=2"
    assert trainer.main([*flags, *train, every, "--schedule=train_and_evaluate"]) == 0
    log = capsys.readouterr().out
    assert re.search(r"eval at step 2: loss [\d.]+, perplexity [\d.]+", log), log
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\\section{R\n", encoding="utf-8")
    result = tmp_path / "out.txt"
    args = [
        f"--output_dir={out}",
        "--decode_hparams=beam_size=1,extra_length=6,return_beams=True,write_beam_scores=True",
        f"--decode_from_file={prompts}",
        f"--decode_to_file={result}",
    ]
    assert decoder.main([*flags, *args]) == 0
    text, score = result.read_bytes().decode("utf-8").rstrip("\n").rsplit("\t", 1)
    # Up to 6 ids after the prompt (a character model's bytes; fewer once EOS comes), each
    # written as at most 3 bytes (U+FFFD for an invalid byte), a "<pad>" counted as one.
    written = one_character_a_pad(text).encode("utf-8", "surrogatepass")
    assert len(written) <= 6 * 3 and float(score) <= 0, text
