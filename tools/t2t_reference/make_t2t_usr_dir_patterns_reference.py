"""What tensor2tensor 1.15.7's datagen writes for the pattern usr_dirs (reference test data).

``tests/data/t2t_usr_dir_patterns/`` holds usr_dirs written for the tests, each reproducing a
pattern of public T2T 1.x usr_dirs (its README.md). This script writes a tiny generated corpus
for each into ``<out>/tmp/<usr_dir>/`` (where the usr_dir's ``generate_samples`` reads it: its
``--tmp_dir``, or the working directory for the one that reads a cwd-relative path), imports
each usr_dir with T2T's own ``utils/usr_dir.py:import_usr_dir`` and runs its problem as
``bin/t2t_datagen.py`` does (seeds 429459, then ``problem.generate_data(data_dir, tmp_dir,
None)``), as ``make_t2t_usr_dir_reference.py`` does for the example usr_dir. Each data dir is
copied to ``<out>/data/<usr_dir>/``, with a JSON of files, examples per shard, the vocabulary
sizes of T2T's ``feature_encoders(data_dir)`` and versions.

As there, T2T's records list their two features in a per-process hash order, so the script runs
again in a new process (``--attempts``) until that order is the sorted one, which is what this
project writes. Run it in T2T's own virtualenv (README.md here)::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_usr_dir_patterns_reference.py \
        --shim=../shared/t2t_shim --usr_dirs=tests/data/t2t_usr_dir_patterns \
        --out=tests/data/t2t_usr_dir_patterns_reference
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile

# the example usr_dir's script, beside this one: the same seed and the same record-order check
from make_t2t_usr_dir_reference import SEED, sorted_records

PROBLEMS = {
    "chars_name_usr": "translit_ab_to_xy",
    "sparse_shards_usr": "next_verse_line",
    "two_token_vocabs_usr": "words_en_to_de",
    "lm_self_usr": "char_lines_lm",
    "class_label_usr": "line_sentiment",
    "multi_label_usr": "toxic_lines",
    "paper_chunks_usr": "paper_chunks_lm",
}
CWD_RELATIVE = {"sparse_shards_usr"}  # reads verses/lines.txt from the working directory

EN = ["the", "a", "my", "your", "this"]
NOUNS = [("cat", "Katze"), ("dog", "Hund"), ("house", "Haus"), ("book", "Buch"), ("tree", "Baum")]
VERBS = [("sees", "sieht"), ("likes", "mag"), ("has", "hat")]
DE_ART = {"the": "die", "a": "eine", "my": "meine", "your": "deine", "this": "diese"}


def write_lines(path: str, lines: list[str]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def word_pair(rng: random.Random) -> tuple[str, str]:
    a1, a2 = rng.choice(EN), rng.choice(EN)
    (n1, g1), (n2, g2) = rng.choice(NOUNS), rng.choice(NOUNS)
    v, gv = rng.choice(VERBS)
    return f"{a1} {n1} {v} {a2} {n2}", f"{DE_ART[a1]} {g1} {gv} {DE_ART[a2]} {g2}"


def write_corpora(tmp: str) -> None:
    rng = random.Random(46)
    # chars_name_usr: letter strings and their transliteration, a file pair a split.
    src, dst = "abcdefgh", "xyzuvwpq"
    for tag, n in (("train", 24), ("dev", 6)):
        words = ["".join(rng.choice(src) for _ in range(rng.randint(2, 6))) for _ in range(n)]
        write_lines(os.path.join(tmp, "chars_name_usr", f"ab.{tag}.txt"), words)
        translit = ["".join(dst[src.index(c)] for c in w) for w in words]
        write_lines(os.path.join(tmp, "chars_name_usr", f"xy.{tag}.txt"), translit)
    # sparse_shards_usr: 4 blocks of 3-4 lines = 10 pairs for 12 shards.
    lines = []
    for size in (3, 4, 3, 4):
        lines += [" ".join(word_pair(rng)[0].split()[:4]) for _ in range(size)] + [""]
    write_lines(os.path.join(tmp, "sparse_shards_usr", "verses", "lines.txt"), lines)
    # two_token_vocabs_usr: word lists (words left out of each: UNK; sizes differ) and pairs.
    usr = os.path.join(tmp, "two_token_vocabs_usr")
    en = EN + [n for n, _ in NOUNS if n != "book"] + [v for v, _ in VERBS]
    de = (
        sorted(set(DE_ART.values()))
        + [g for _, g in NOUNS if g not in ("Buch", "Baum")]
        + [g for _, g in VERBS]
    )
    write_lines(os.path.join(usr, "words.en.vocab"), en)
    write_lines(os.path.join(usr, "words.de.vocab"), de)
    for tag, n in (("train", 16), ("dev", 4)):
        pairs = [word_pair(rng) for _ in range(n)]
        write_lines(os.path.join(usr, f"words.{tag}.en"), [p[0] for p in pairs])
        write_lines(os.path.join(usr, f"words.{tag}.de"), [p[1] for p in pairs])
    # lm_self_usr: 13 sentences (a blank line skipped) for a language model's 3 + 1 shards.
    lines = [word_pair(rng)[rng.randint(0, 1)] for _ in range(13)]
    write_lines(os.path.join(tmp, "lm_self_usr", "lines.txt"), lines[:6] + [""] + lines[6:])
    # class_label_usr: "label<TAB>sentence" lines, a file a split.
    for tag, n in (("train", 10), ("dev", 3)):
        rows = [f"{rng.randint(0, 1)}\t{word_pair(rng)[0]}" for _ in range(n)]
        write_lines(os.path.join(tmp, "class_label_usr", f"{tag}.tsv"), rows)
    # paper_chunks_usr: one LaTeX-like text (non-ASCII too), cut into 48-character chunks:
    # 100 train shards and 1 dev shard get 120 chunks (so the dev shard gets one).
    paragraphs = []
    while sum(map(len, paragraphs)) < 120 * 48 - 60:
        sentence = word_pair(rng)[rng.randint(0, 1)]
        paragraphs.append(f"\\section{{Résumé {len(paragraphs)}}}\n{sentence} — $\\alpha$.\n")
    os.makedirs(os.path.join(tmp, "paper_chunks_usr"))
    with open(os.path.join(tmp, "paper_chunks_usr", "paper_text.txt"), "w", encoding="utf-8") as f:
        f.write("".join(paragraphs))
    write_toxic_zip(os.path.join(tmp, "multi_label_usr", "toxic.zip"), random.Random(59))


def kaggle_csv(header: list[str], rows: list[list[str]]) -> bytes:
    """Kaggle's CSV: quoted header and text fields, bare 0/1 flags, "" for a quote."""
    quote = lambda v: '"' + v.replace('"', '""') + '"'  # noqa: E731
    lines = [",".join(quote(h) for h in header)]
    lines += [",".join([quote(r[0]), quote(r[1]), *r[2:]]) for r in rows]
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_toxic_zip(path: str, rng: random.Random) -> None:
    """multi_label_usr: the toxic-comment competition's three CSVs in one zip (fixed dates, so
    the same bytes every run): 12 train comments, 4 test comments and their labels."""
    flags = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]

    def comments(n: int) -> list[list[str]]:
        rows = []
        for _ in range(n):
            text = word_pair(rng)[0] + rng.choice(["", " !", ' "really"', "\nsecond line"])
            bits = [str(int(rng.random() < 0.3)) for _ in flags]
            rows.append([f"{rng.getrandbits(64):016x}", text, *bits])
        return rows

    train, test = comments(12), comments(4)
    files = {
        "train.csv": kaggle_csv(["id", "comment_text", *flags], train),
        "test.csv": kaggle_csv(["id", "comment_text"], [r[:2] for r in test]),
        "test_labels.csv": (
            "\n".join([",".join(["id", *flags])] + [",".join([r[0], *r[2:]]) for r in test]) + "\n"
        ).encode(),
    }
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2018, 1, 1, 0, 0, 0)), data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--usr_dirs", required=True, help="tests/data/t2t_usr_dir_patterns")
    parser.add_argument("--out", required=True, help="output folder (tmp/, data/, JSON)")
    parser.add_argument(
        "--attempts", type=int, default=10, help="runs (processes) to try for sorted records"
    )
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.utils import registry, usr_dir

    out = os.path.abspath(args.out)
    tmp, data_out = os.path.join(out, "tmp"), os.path.join(out, "data")
    shutil.rmtree(tmp, ignore_errors=True)
    write_corpora(tmp)
    work = tempfile.mkdtemp()
    home = os.getcwd()
    shards, vocab_sizes = {}, {}
    for name, problem_name in PROBLEMS.items():
        usr_dir.import_usr_dir(os.path.join(os.path.abspath(args.usr_dirs), name))
        scratch, data_dir = os.path.join(work, name, "tmp"), os.path.join(work, name, "data")
        shutil.copytree(os.path.join(tmp, name), scratch)
        os.makedirs(data_dir)
        os.chdir(scratch if name in CWD_RELATIVE else home)
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, main
        random.seed(SEED)
        np.random.seed(SEED)
        problem = registry.problem(problem_name)
        problem.generate_data(data_dir, scratch, None)
        os.chdir(home)
        encoders = problem.feature_encoders(data_dir)
        vocab_sizes[problem_name] = {  # LM: targets; multi_label_usr: a list of encoders
            k: [x.vocab_size for x in e] if isinstance(e, list) else e.vocab_size
            for k, e in encoders.items()
        }
        shutil.rmtree(os.path.join(data_out, name), ignore_errors=True)
        shutil.copytree(data_dir, os.path.join(data_out, name))
        for f in sorted(os.listdir(data_dir)):
            if "-" in f:
                shards[f"{name}/{f}"] = sorted_records(tf, os.path.join(data_dir, f))
    summary = {
        "problems": PROBLEMS,
        "random_seed": SEED,
        "files": {name: sorted(os.listdir(os.path.join(data_out, name))) for name in PROBLEMS},
        "examples_per_shard": {f: n for f, (_, n) in shards.items()},
        "all_records_in_sorted_feature_order": all(a == n for a, n in shards.values()),
        "vocab_sizes": vocab_sizes,  # T2T's feature_encoders(data_dir) after datagen
        "versions": {
            "tensor2tensor": "1.15.7",
            "tensorflow": tf.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        },
    }
    with open(os.path.join(out, "t2t_1.15.7_datagen.json"), "w", encoding="utf-8") as f:
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
