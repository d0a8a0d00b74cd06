"""What tensor2tensor 1.15.7's datagen writes for its DeepMind mathematics, AlgoLisp program
search, GitHub function/docstring and Description2Code problems (reference test data for
``t2t_repro/t2t_compat/algorithmic_math_deepmind.py``, ``program_search.py``,
``function_docstring.py`` and ``desc2code.py``).

The corpora are not ours to ship: this writes SYNTHETIC ones (toy text, fixed seed) under T2T's
file and archive names into ``<out>/tmp``: ``mathematics_dataset-v1.0.tar.gz`` (members
``v1.0/<folder>/<module>.txt``, fixed member times, no gzip time), ``metaset3.{train,dev,test}
.jsonl.gz``, the 100 ``func-doc-pairs-000NN-of-00100.csv`` and ``description2code_current.zip``.
Then, for each problem, it runs T2T's datagen as ``bin/t2t_datagen.py`` does (seeds 429459,
then ``problem.generate_data(data_dir, tmp_dir, None)``) on a copy of that folder and writes
``<out>/t2t_1.15.7_code_math.json``: the files written, the vocabulary's sha256, each shard's
record count and the sha256 of its records' ids (``tests/t2t_records.py``, ``ids_digest`` with
every feature), problem hparams, ``eval_metrics()`` and the names T2T registers in each module.
The Description2Code problems record the exception their datagen raises, and their hparams
with two small subword vocabularies written under T2T's names.

One change to T2T: ``algorithmic_math_deepmind``'s samples are the file's bytes, which its
encoding joins to a text prefix, refused by Python 3 (that TypeError is recorded first); they are
decoded as UTF-8, which encode to what its Python 2 code wrote. In T2T's venv (README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_code_math_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_code_math_reference
"""

import argparse
import csv
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DATE = 1_600_000_000
ZIP_DATE = (2020, 9, 13, 12, 0, 0)
WORDS = (
    "the a list of numbers given return sum max min sort reverse each element array string "
    "count first last value index résumé naïve self int def if for"
).split()
MODULES = "algorithmic_math_deepmind program_search function_docstring desc2code".split()
PROBLEMS = [
    "algorithmic_math_deepmind_all",
    "program_search_algolisp",
    "github_function_docstring",
    "programming_desc2code_py",
    "programming_desc2code_cpp",
]
DESC2CODE_VOCABS = {
    "vocab.endefr.32768": ["<pad>_", "<EOS>_", "the_", "a_", "list_", "e", "t", "h", "_"],
    "vocab.py.4096": ["<pad>_", "<EOS>_", "print_", "(_", ")_", "p", "r", "i", "_"],
    "vocab.cpp.4096": ["<pad>_", "<EOS>_", "int_", "main_", "{_", "}_", "i", "n", "_"],
}


def words(rng: random.Random, low: int = 2, high: int = 8) -> list[str]:
    return [rng.choice(WORDS) for _ in range(rng.randint(low, high))]


def math_archive(rng: random.Random, d: str) -> None:
    members = {}
    folders = ("train-easy", "train-medium", "train-hard", "interpolate", "extrapolate")
    for folder in folders:
        for module in ("numbers__gcd", "algebra__linear_1d", "arithmetic__add"):  # not sorted
            rows = []
            for _ in range(rng.randint(3, 7)):
                a, b = rng.randint(-99, 999), rng.randint(1, 99)
                rows += [f"What is {a} + {b}?  ", str(a + b)]
            if module == "numbers__gcd":
                rows.append("Solve 3*x = 9 for x.")  # a last question without its answer
            members[f"v1.0/{folder}/{module}.txt"] = "".join(r + "\n" for r in rows).encode()
        members[f"v1.0/{folder}/README.md"] = b"not read\n"
    path = f"{d}/mathematics_dataset-v1.0.tar.gz"
    with open(path, "wb") as f, gzip.GzipFile("", "wb", fileobj=f, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mtime = len(data), DATE
                tar.addfile(info, io.BytesIO(data))


def tree(rng: random.Random, depth: int = 0) -> list:
    items = [rng.choice(["map", "filter", "reduce", "+", "-", "a", "b", "0", "1"])]
    for _ in range(rng.randint(1, 3)):
        items.append(
            tree(rng, depth + 1) if depth < 2 and rng.random() < 0.4 else rng.choice(WORDS)
        )
    return items


def algolisp(rng: random.Random, d: str) -> None:
    for split, n in (("train", 40), ("dev", 8), ("test", 5)):
        lines = []
        for _ in range(n):
            task = {"text": words(rng, 4, 12), "short_tree": tree(rng), "args": {"a": "int[]"}}
            lines.append(json.dumps(task, ensure_ascii=rng.random() < 0.5))
        with open(f"{d}/metaset3.{split}.jsonl.gz", "wb") as f:
            with gzip.GzipFile("", "wb", fileobj=f, mtime=0) as gz:
                gz.write("".join(line + "\n" for line in lines).encode("utf-8"))


def function_docstring(rng: random.Random, d: str) -> None:
    for i in range(100):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for _ in range(rng.randint(0, 3)):
            doc = " ".join(words(rng))
            code = " ".join(["def", rng.choice(WORDS), "(", "x", ",", "y", ")", ":"] + words(rng))
            writer.writerow([doc, code])
        with open(f"{d}/func-doc-pairs-{i:05}-of-00100.csv", "w", encoding="utf-8") as f:
            f.write(out.getvalue())


def desc2code(rng: random.Random, d: str) -> None:
    members = {}
    for source in ("codechef", "codeforces"):
        for p in range(3):
            base = f"description2code_current/{source}/p{p}"
            members[f"{base}/description/description.txt"] = " ".join(words(rng, 5, 20)).encode()
            members[f"{base}/solutions_python/1.txt"] = b"print(1)\n\tx = 2\n"
            members[f"{base}/solutions_c++/1.txt"] = b"#include <x>\nint main() { // c\n}\n"
            if p == 1:  # a Java solution, which both languages' filters drop
                members[f"{base}/solutions_python/2.txt"] = b"import java.util.*;\n"
                members[f"{base}/solutions_c++/2.txt"] = b"import java.util.*;\n"
    with zipfile.ZipFile(f"{d}/description2code_current.zip", "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=ZIP_DATE), data)


def write_corpora(tmp: str) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    rng = random.Random(2020)
    math_archive(rng, tmp)
    algolisp(rng, tmp)
    function_docstring(rng, tmp)
    desc2code(rng, tmp)


def ids_digest(tf, path: str) -> tuple[int, str]:
    """tests/t2t_records.py's ``ids_digest(path, None)``: each record's {feature: ids}."""
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append({k: list(feature[k].int64_list.value) for k in sorted(feature)})
    text = json.dumps(found, separators=(",", ":"))
    return len(found), hashlib.sha256(text.encode()).hexdigest()


def hparams_facts(problem, data_dir: str) -> dict:
    problem.get_feature_encoders(data_dir)
    hp = problem.get_hparams()
    return {
        "input_space_id": int(hp.input_space_id),
        "target_space_id": int(hp.target_space_id),
        "vocab_size": dict(hp.vocab_size),
        "modality": dict(hp.modality),
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": int(hp.stop_at_eos),
    }


def run_problem(tf, np, registry, name: str, tmp_dir: str) -> dict:
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_dir, scratch)
    os.makedirs(data_dir)
    problem = registry.problem(name)
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
    random.seed(SEED)
    np.random.seed(SEED)
    facts = {"class": type(problem).__name__}
    try:
        problem.generate_data(data_dir, scratch, None)
    except Exception as e:  # noqa: BLE001 (desc2code's assert)
        facts["error"] = type(e).__name__
        facts["data_files_after_error"] = sorted(os.listdir(data_dir))
        for vocab, subtokens in DESC2CODE_VOCABS.items():
            with open(os.path.join(data_dir, vocab), "w") as f:
                f.write("".join(f"'{s}'\n" for s in subtokens))
        facts["problem_hparams"] = hparams_facts(problem, data_dir)
        facts["eval_metrics"] = list(problem.eval_metrics())
        shutil.rmtree(work)
        return facts
    files = sorted(os.listdir(data_dir))
    shards = {f: ids_digest(tf, os.path.join(data_dir, f)) for f in files if f.startswith(name)}
    counts: dict = {}
    for shard in sorted(shards):
        counts.setdefault(shard.rsplit("-", 4)[-4], []).append(shards[shard][0])
    vocab_file = problem.vocab_filename if problem.vocab_type != "character" else None
    vocab_sha = None
    if vocab_file:
        with open(os.path.join(data_dir, vocab_file), "rb") as f:
            vocab_sha = hashlib.sha256(f.read()).hexdigest()
    facts.update(
        other_files=[f for f in files if f not in shards],
        vocab_file=vocab_file,
        vocab_sha256=vocab_sha,
        shard_records=counts,
        records_sha256={f: s[1] for f, s in shards.items() if s[0]},
        problem_hparams=hparams_facts(problem, data_dir),
        eval_metrics=list(problem.eval_metrics()),
        vocab_type=problem.vocab_type,
        dataset_splits=[dict(s) for s in problem.dataset_splits],
        tmp_files_after=sorted(os.listdir(scratch)),
    )
    shutil.rmtree(work)
    return facts


def python2_math_samples(module) -> None:
    """The samples as text: T2T's Python 2 byte encoder took the bytes it read."""
    cls = module.AlgorithmicMathDeepmindAll
    original = cls.generate_samples

    def generate_samples(self, data_dir, tmp_dir, dataset_split):
        for sample in original(self, data_dir, tmp_dir, dataset_split):
            yield {k: v.decode("utf-8") for k, v in sample.items()}

    cls.generate_samples = generate_samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import importlib

    import numpy as np
    import tensorflow as tf
    from tensor2tensor.utils import registry

    modules = {m: importlib.import_module(f"tensor2tensor.data_generators.{m}") for m in MODULES}
    tmp_dir = os.path.join(args.out, "tmp")
    write_corpora(tmp_dir)
    summary = {"random_seed": SEED, "problems": {}}
    python3 = run_problem(tf, np, registry, PROBLEMS[0], tmp_dir)
    summary["algorithmic_math_deepmind_all_python3_error"] = python3.get("error")
    python2_math_samples(modules["algorithmic_math_deepmind"])
    for name in PROBLEMS:
        summary["problems"][name] = facts = run_problem(tf, np, registry, name, tmp_dir)
        print(name, facts.get("error") or sum(map(sum, facts["shard_records"].values())))
    summary["registered"] = {
        module: sorted(
            n
            for n in registry.list_base_problems()
            if type(registry.problem(n)).__module__.endswith(f".{module}")
        )
        for module in MODULES
    }
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    path = os.path.join(args.out, "t2t_1.15.7_code_math.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
