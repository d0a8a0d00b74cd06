"""What tensor2tensor 1.15.7's datagen writes for a test usr_dir (reference test data).

Writes a tiny generated corpus into ``<out>/tmp``, imports the usr_dir (``tests/data/t2t_usr_dir``
or ``tests/data/t2t_usr_dir_surface``, each with its own corpus and problems: ``USR_DIRS``) with
T2T's own ``utils/usr_dir.py:import_usr_dir`` and, for each of its problems, does what
``bin/t2t_datagen.py`` does per problem (``set_random_seed``: ``tf.set_random_seed``,
``random.seed`` and ``np.random.seed`` with ``--random_seed`` 429459, then
``generate_data_for_registered_problem``: ``problem.generate_data(data_dir, tmp_dir, None)``).
``t2t_datagen`` itself is not imported: its ``all_problems`` import needs packages (sympy, gym,
...) that have no part in this. The data dir it leaves (vocab file and TFRecord shards) is
copied to ``<out>/data``, with a JSON of its files, example counts, T2T's byte and token
encoders on a few inputs, and the versions.

T2T's records differ from run to run in one thing only: the order in which a record lists its
features (``inputs``/``targets``), which protobuf takes from a per-process hash. The examples
and their order are fixed (the seeded shuffle). So that the test can compare bytes, the script
runs again in a new process (``--attempts``) until that order is the sorted one, which is what
this project writes (``SerializeToString(deterministic=True)``).

Another usr_dir: ``--problems`` names its problems, ``--given_corpus`` reads ``<out>/tmp`` as
it is (its inputs, committed beside the reference) instead of writing the toy corpus, and
``--hparams_set`` also records each problem's hparams as T2T's ``t2t-trainer`` makes them
(``utils/hparams_lib.py:create_hparams`` with ``data_dir`` and ``problem_name``: the problem's
``get_hparams`` of the set's model hparams), and ``--vocab_quirks`` the vocab file T2T's
``SubwordTextEncoder.store_to_file`` writes of subtokens with newlines in them and the
subtokens its reader takes back from it.

It must run in a virtualenv of its own with T2T 1.15.7, never in the project's (README.md
here). Usage::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_usr_dir_reference.py \
        --shim=../shared/t2t_shim --usr_dir=tests/data/t2t_usr_dir \
        --out=tests/data/t2t_usr_dir_reference
    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_usr_dir_reference.py \
        --shim=../shared/t2t_shim --usr_dir=tests/data/t2t_usr_dir_surface \
        --out=tests/data/t2t_usr_dir_surface_reference
"""

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile

SEED = 429459  # t2t_datagen's --random_seed default
PROBLEMS = ["tiny_en_de_subwords", "tiny_upcase_chars", "tiny_translate_en_de"]

EN = "the a one my your this".split()
NOUNS = [
    ("cat", "Katze"),
    ("dog", "Hund"),
    ("house", "Haus"),
    ("garden", "Garten"),
    ("car", "Auto"),
    ("book", "Buch"),
    ("tree", "Baum"),
    ("child", "Kind"),
]
VERBS = [("sees", "sieht"), ("likes", "mag"), ("finds", "findet"), ("has", "hat")]
DE_ART = {"the": "die", "a": "eine", "one": "eine", "my": "meine", "your": "deine", "this": "diese"}


def corpus(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """Short English-German pairs of a toy grammar (the words need not be good German)."""
    pairs = []
    for _ in range(n):
        a1, a2 = rng.choice(EN), rng.choice(EN)
        (n1, g1), (n2, g2) = rng.choice(NOUNS), rng.choice(NOUNS)
        v, gv = rng.choice(VERBS)
        end = rng.choice([".", "!", "?"])
        pairs.append(
            (f"{a1} {n1} {v} {a2} {n2}{end}", f"{DE_ART[a1]} {g1} {gv} {DE_ART[a2]} {g2}{end}")
        )
    return pairs


def write_corpus(tmp_dir: str) -> None:
    rng = random.Random(2026)
    os.makedirs(tmp_dir, exist_ok=True)
    pairs = corpus(rng, 40)
    with open(os.path.join(tmp_dir, "tiny.en"), "w", encoding="utf-8") as en:
        en.writelines(p[0] + "\n" for p in pairs)
    with open(os.path.join(tmp_dir, "tiny.de"), "w", encoding="utf-8") as de:
        de.writelines(p[1] + "\n" for p in pairs)
    for name, n in (("train", 24), ("heldout", 8)):
        with open(os.path.join(tmp_dir, f"chars.{name}.tsv"), "w", encoding="utf-8") as f:
            for src, _ in corpus(rng, n):
                f.write(f"{src}\t{src}\n")
            f.write("no tab on this line\n")
    dev = corpus(rng, 8)
    with open(os.path.join(tmp_dir, "tiny_dev.en"), "w", encoding="utf-8") as en:
        en.writelines(p[0] + "\n" for p in dev)
    with open(os.path.join(tmp_dir, "tiny_dev.de"), "w", encoding="utf-8") as de:
        de.writelines(p[1] + "\n" for p in dev)


SURFACE_PROBLEMS = [
    "tiny_tmpdir",
    "tiny_tmpdir_tokens",
    "tiny_own_text_encoder",
    "tiny_zip_translate",
]


def _lines(path: str, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def write_surface_corpus(tmp_dir: str) -> None:
    """Text2textTmpdir's four files and vocab.txt; a .zip holding a train pair and a dev tsv;
    a dev pair of .gz files. Archives get fixed dates, so the bytes are the same each run."""
    rng = random.Random(2046)
    os.makedirs(tmp_dir, exist_ok=True)
    train, dev = corpus(rng, 24), corpus(rng, 8)
    for split, pairs in (("train", train), ("eval", dev)):
        _lines(os.path.join(tmp_dir, f"inputs.{split}.txt"), [p[0] for p in pairs])
        _lines(os.path.join(tmp_dir, f"targets.{split}.txt"), [p[1] for p in pairs])
    tokens = {w for pair in train for text in pair for w in text.split()}
    # Words missing from vocab.txt become <UNK> (Text2textTmpdirTokens' oov_token).
    _lines(os.path.join(tmp_dir, "vocab.txt"), sorted(w for w in tokens if "a" not in w[:1]))
    zipped, tsv = corpus(rng, 16), corpus(rng, 6)
    with zipfile.ZipFile(os.path.join(tmp_dir, "tiny_corpus.zip"), "w") as archive:
        for name, text in (
            ("tiny_zip/train.en", "".join(p[0] + "\n" for p in zipped)),
            ("tiny_zip/train.de", "".join(p[1] + "\n" for p in zipped)),
            ("tiny_zip/dev.tsv", "".join(f"{p[0]}\t{p[1]}\n" for p in tsv) + "no tab\n"),
        ):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            archive.writestr(info, text.encode("utf-8"))
    gz_pairs = corpus(rng, 5)
    for lang, column in (("en", 0), ("de", 1)):
        path = os.path.join(tmp_dir, f"tiny_dev.{lang}.gz")
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write("".join(p[column] + "\n" for p in gz_pairs).encode("utf-8"))


# usr_dir folder name -> (its corpus, its problems, whether the JSON has encoder checks).
USR_DIRS = {
    "t2t_usr_dir": (write_corpus, PROBLEMS, True),
    "t2t_usr_dir_surface": (write_surface_corpus, SURFACE_PROBLEMS, False),
}


def sorted_records(tf, path: str) -> tuple[int, int]:
    """(records whose bytes list the features in sorted order, records): T2T serializes the
    feature map in the process's hash order, so its bytes differ from run to run in that order
    alone (the examples and their order do not)."""
    records = list(tf.compat.v1.io.tf_record_iterator(path))
    in_order = sum(
        r == tf.train.Example.FromString(r).SerializeToString(deterministic=True) for r in records
    )
    return in_order, len(records)


def encoder_reference(text_encoder, work: str) -> dict:
    """T2T's byte and token encoders on a few inputs (ids, texts, vocabulary sizes)."""
    byte = text_encoder.ByteTextEncoder()
    text = "Grüße, 世界! <EOS>"
    vocab = os.path.join(work, "tokens.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("<pad>\n<EOS>\n<UNK>\nthe\ncat\nsees\n")
    token = text_encoder.TokenTextEncoder(vocab, replace_oov="<UNK>")
    reverse = text_encoder.TokenTextEncoder(vocab, reverse=True, replace_oov="<UNK>")
    return {
        "byte_text": text,
        "byte_ids": byte.encode(text),
        "byte_decoded_with_reserved": byte.decode([0, 1, *byte.encode(text), 1]),
        "byte_decoded_stripped": byte.decode([*byte.encode(text), 1, 0], strip_extraneous=True),
        "byte_vocab_size": byte.vocab_size,
        "token_vocab": ["<pad>", "<EOS>", "<UNK>", "the", "cat", "sees"],
        "token_ids": token.encode(" the dog sees the cat "),
        "token_reverse_ids": reverse.encode("the dog sees"),
        "token_decoded": token.decode([3, 4, 9, 1]),
        "token_decoded_stripped": token.decode([3, 4, 1, 0], strip_extraneous=True),
        "token_vocab_size": token.vocab_size,
    }


QUIRK_SUBTOKENS = ["<pad>_", "<EOS>_", "a\nb", "\n", "c_", " \n", "'"]


def vocab_file_reference(text_encoder, work: str) -> dict:
    """T2T's SubwordTextEncoder.store_to_file of subtokens with newlines in them (the file's
    text) and what its _load_from_file_object reads back from that file."""
    encoder = text_encoder.SubwordTextEncoder()
    encoder._init_subtokens_from_list(list(QUIRK_SUBTOKENS))
    path = os.path.join(work, "quirks.subwords")
    encoder.store_to_file(path)
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    read_back = text_encoder.SubwordTextEncoder(path)._all_subtoken_strings
    return {"subtokens": QUIRK_SUBTOKENS, "file": text, "read_back": list(read_back)}


def problem_hparams_reference(hparams_lib, hparams_set: str, name: str, data_dir: str) -> dict:
    """The problem hparams T2T's t2t-trainer gives the model (``create_hparams(hparams_set,
    data_dir=..., problem_name=...)``), the fields T2T's ``_default_hparams`` has."""
    hparams = hparams_lib.create_hparams(hparams_set, "", data_dir=data_dir, problem_name=name)
    p = hparams.problem_hparams
    fields = ("loss_multiplier", "batch_size_multiplier", "stop_at_eos", "modality")
    found = {f: getattr(p, f) for f in fields}
    found.update(
        vocab_size=dict(p.vocab_size),
        input_space_id=int(p.input_space_id),
        target_space_id=int(p.target_space_id),
        vocabulary_sizes={k: v.vocab_size for k, v in p.vocabulary.items()},
    )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--usr_dir", required=True, help="tests/data/t2t_usr_dir")
    parser.add_argument("--out", required=True, help="output folder (tmp/, data/, JSON)")
    parser.add_argument(
        "--attempts", type=int, default=10, help="runs (processes) to try for sorted records"
    )
    parser.add_argument(
        "--problems", default="", help="comma-separated (default: the usr_dir's in USR_DIRS)"
    )
    parser.add_argument(
        "--given_corpus", action="store_true", help="read <out>/tmp as it is (no toy corpus)"
    )
    parser.add_argument("--hparams_set", default="", help="also record the problems' hparams")
    parser.add_argument(
        "--vocab_quirks", action="store_true", help="also record T2T's vocab file of newlines"
    )
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import text_encoder
    from tensor2tensor.utils import hparams_lib, registry, usr_dir

    write, problems, with_encoders = USR_DIRS.get(
        os.path.basename(os.path.normpath(args.usr_dir)), (None, [], False)
    )
    if args.problems:
        problems = args.problems.split(",")
    tmp_dir = os.path.join(args.out, "tmp")
    data_out = os.path.join(args.out, "data")
    if not args.given_corpus:
        if write is None:
            raise SystemExit(f"{args.usr_dir}: no corpus of its own here; pass --given_corpus")
        write(tmp_dir)
    usr_dir.import_usr_dir(args.usr_dir)
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_dir, scratch)
    os.makedirs(data_dir)
    for name in problems:  # bin/t2t_datagen.py, main
        tf.compat.v1.set_random_seed(SEED)
        random.seed(SEED)
        np.random.seed(SEED)
        registry.problem(name).generate_data(data_dir, scratch, None)
    shutil.rmtree(data_out, ignore_errors=True)
    shutil.copytree(data_dir, data_out)
    shards = {
        f: sorted_records(tf, os.path.join(data_out, f))
        for f in sorted(os.listdir(data_out))
        if "-" in f
    }
    summary = {
        "problems": problems,
        "random_seed": SEED,
        "files": sorted(os.listdir(data_out)),
        "examples_per_shard": {f: n for f, (_, n) in shards.items()},
        "all_records_in_sorted_feature_order": all(a == n for a, n in shards.values()),
        "versions": {
            "tensor2tensor": "1.15.7",
            "tensorflow": tf.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        },
    }
    if with_encoders:
        summary["encoders"] = encoder_reference(text_encoder, work)
    else:  # what T2T left in --tmp_dir: extracted, gunzipped and compiled files
        summary["tmp_files_after_datagen"] = sorted(
            os.path.relpath(os.path.join(d, f), scratch)
            for d, _, files in os.walk(scratch)
            for f in files
        )
    if args.hparams_set:
        summary["hparams_set"] = args.hparams_set
        summary["problem_hparams"] = {
            name: problem_hparams_reference(hparams_lib, args.hparams_set, name, data_out)
            for name in problems
        }
    if args.vocab_quirks:
        summary["vocab_file_quirks"] = vocab_file_reference(text_encoder, work)
    with open(os.path.join(args.out, "t2t_1.15.7_datagen.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(work)
    print("wrote", data_out, "and", len(shards), "shards")
    if not summary["all_records_in_sorted_feature_order"] and args.attempts > 1:
        print("records not in sorted feature order; running again in a new process")
        argv = [a for a in sys.argv[1:] if not a.startswith("--attempts")]
        command = [sys.executable, sys.argv[0], *argv, f"--attempts={args.attempts - 1}"]
        sys.exit(subprocess.call(command))


if __name__ == "__main__":
    main()
