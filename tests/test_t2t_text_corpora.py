"""T2T 1.15's LAMBADA, enwik8, CNN/Daily Mail, dialog and SQuAD problems under T2T's names
(``t2t_compat/{lambada,enwik8,summarization,squad}_problems.py``, ``dialog_corpora.py``):
datagen writes what T2T 1.15.7's writes on the same synthetic corpora (``squad``'s records
with their ``context``), and the problem hparams and eval metrics are T2T's
(tests/data/t2t_text_corpora_reference, made by T2T itself:
tools/t2t_reference/make_t2t_text_corpora_reference.py); ``squad`` trains question -> answer
and ``squad_concat`` on question, separator and context, as T2T's input pipeline gives them."""

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

import t2t_repro.t2t_compat.dialog_corpora  # noqa: F401  (registers the problems)
import t2t_repro.t2t_compat.enwik8_problems  # noqa: F401
import t2t_repro.t2t_compat.lambada_problems  # noqa: F401
import t2t_repro.t2t_compat.squad_problems  # noqa: F401
import t2t_repro.t2t_compat.summarization_problems  # noqa: F401
from t2t_repro.commands import datagen
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.problem import T2TProblemError
from tests.t2t_records import ids_digest, problem_facts, record_ids

REFERENCE = Path(__file__).parent / "data" / "t2t_text_corpora_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_text.json").read_text(encoding="utf-8"))
PROBLEMS = EXPECTED["problems"]
# full datagen for one problem of each corpus (the others: their hparams, below)
DATAGEN = [
    "lambada_lm",
    "lambada_rc",
    "enwik8_l65k",
    "summarize_cnn_dailymail32k",
    "squad_text2text",
    "squad",
    "squad_concat",
    "squad_concat_positioned",
    "dialog_cornell32k",
    "dialog_dailydialog16k",
    "dialog_personachat16k",
    "dialog_opensubtitles64k2018",
]


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()


def _corpus(name: str, tmp_dir: Path) -> None:
    """The stored corpus into --tmp_dir (a dialog's raw folder under its own name there)."""
    for entry in (REFERENCE / PROBLEMS[name]["corpus"]).iterdir():
        if entry.name == "tmp":
            shutil.copytree(entry, tmp_dir, dirs_exist_ok=True)
        else:
            folder = entry.name.replace("2009", name[-4:]) if "opensub" in name else entry.name
            shutil.copytree(entry, tmp_dir / folder)


@pytest.mark.parametrize("name", DATAGEN)
def test_datagen_writes_what_t2t_1_15_7_writes(name, tmp_path):
    want = PROBLEMS[name]
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    _corpus(name, tmp_dir)
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    vocab = data_dir / want["hparams"]["vocab_filename"]
    if want["vocab_sha256"]:
        assert hashlib.sha256(vocab.read_bytes()).hexdigest() == want["vocab_sha256"]
    for shard, count in want["records"].items():
        assert ids_digest(data_dir / shard, None) == (count, want["records_sha256"][shard]), shard
    if (REFERENCE / want["corpus"] / "tmp").exists():
        assert sorted(p.name for p in tmp_dir.iterdir()) == want["tmp_files_after"]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_problem_hparams_are_t2ts(name, tmp_path):
    """Each problem's hparams (vocab sizes, modalities, space ids), eval metrics, vocab file
    name and shards, as T2T's, on T2T's vocabulary file (its sample records: a dialog's
    source and target lines)."""
    want = PROBLEMS[name]
    problem = t2t_registry.problem(name)
    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    _corpus(name, tmp_dir)
    data_dir.mkdir()
    if "dialog" in name:  # its text files and vocabulary: made before the train split
        problem.generate_encoded_samples(str(data_dir), str(tmp_dir), "train")
    elif "lambada" in name:  # the vocabulary: written by the first sample's reading
        next(iter(problem.generate_samples(str(data_dir), str(tmp_dir), "train")))
    else:
        problem.get_or_create_vocab(str(data_dir), str(tmp_dir))
    if want["vocab_sha256"]:
        vocab = data_dir / want["hparams"]["vocab_filename"]
        assert hashlib.sha256(vocab.read_bytes()).hexdigest() == want["vocab_sha256"]
    assert problem_facts(problem, data_dir) == want["hparams"]


def test_enwik8_splits_a_long_corpus_as_t2t(tmp_path):
    """enwik8's last 10M characters are dev and test: T2T's example counts and first and last
    examples of each split on 10.2M characters."""
    unit = "enwik8 text \u00e9t\u00e9 " * 50 + "\n"
    text = (unit * (10_200_000 // len(unit) + 1))[:10_200_000]
    with zipfile.ZipFile(tmp_path / "enwik8.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("enwik8", text.encode("utf-8"))
    problem = t2t_registry.problem("enwik8_l65k")
    vocab = problem.get_or_create_vocab(None, None)
    for split, want in EXPECTED["enwik8_big"].items():
        samples = [s["targets"] for s in problem.generate_samples(None, str(tmp_path), split)]
        ends = [vocab.encode(samples[0]), vocab.encode(samples[-1])]
        assert (len(samples), len(ends[1])) == (want["count"], want["last_length"]), split
        assert _digest(ends) == want["first_last_sha256"], split


@pytest.mark.parametrize("name", ["squad", "squad_concat"])
def test_squad_trains_on_the_inputs_t2t_gives_its_transformer(name, tmp_path):
    """The trainer's dataset of ``squad``'s records (T2T's, above): ``squad`` reads the
    question as inputs, its ``context`` dropped (T2T's transformer never reads it);
    ``squad_concat`` the question, ``<EOQ>``'s id and the context (T2T's preprocess_example)."""
    from t2t_repro.data.input_pipeline import make_dataset
    from t2t_repro.hparams_lib.build import create_run_hparams

    tmp_dir, data_dir = tmp_path / "tmp", tmp_path / "data"
    _corpus("squad", tmp_dir)
    argv = ["--problem=squad", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, "--offline", "--noprogress", "--num_workers=1"]) == 0
    problem = t2t_registry.problem(name)
    hp = create_run_hparams(problem, str(data_dir), "transformer_tiny")  # context: accepted
    assert (hp.input_vocab_size, hp.target_vocab_size) == (102, 102)  # T2T's, the reference
    read = problem.read_example_fn("train", hp)  # as the trainer asks it
    pattern = problem.filepattern(str(data_dir), "train")
    batches = list(make_dataset(pattern, "train", hp, seed=1, repeat=False, read_example=read))
    assert all(sorted(batch) == ["inputs", "targets"] for batch in batches)
    found = sorted(
        (tuple(int(i) for i in inputs if i), tuple(int(t) for t in targets if t))
        for batch in batches
        for inputs, targets in zip(batch["inputs"].numpy(), batch["targets"].numpy(), strict=True)
    )
    records = [
        r for shard in sorted(data_dir.glob("squad-train-*")) for r in record_ids(shard, None)
    ]
    sep = [problem.QUESTION_SEPARATOR_ID] if name == "squad_concat" else None
    want = sorted(
        (tuple(r["inputs"] + sep + r["context"] if sep else r["inputs"]), tuple(r["targets"]))
        for r in records
    )
    assert len(found) == 27 and found == want
    if sep:  # a split's decodes read the question text alone: refused, T2T's reads records
        with pytest.raises(T2TProblemError, match="decode with --decode_from_file"):
            problem.check_split_decodes()
    else:
        problem.check_split_decodes()
