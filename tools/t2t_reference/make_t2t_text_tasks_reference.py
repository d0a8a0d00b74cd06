"""What tensor2tensor 1.15.7's datagen writes for its transduction, copyable-tokens,
subject-verb agreement, style transfer, MS COCO paraphrase and CoNLL 2002 problems (reference
test data for ``t2t_repro/t2t_compat/transduction_problems.py``, ``pointer_generator_word.py``,
``subject_verb_agreement.py``, ``style_transfer.py``, ``paraphrase_ms_coco.py`` and
``conll_ner.py``).

The corpora are not ours to ship: this writes SYNTHETIC ones (toy sentences, fixed seed) under
T2T's file and archive names into ``<out>/tmp``: ``agr_50_mostcommon_10K.tsv.gz``,
``shakespeare.train.tgz`` / ``shakespeare.dev.tgz``, ``captions_train-val2014.zip``,
``conll2002.zip`` (fixed member times, no gzip time) and ``text2text_tmpdir_tokens``' files
(``inputs.train.txt``..., ``vocab.txt``). Then, for each problem (``PROBLEMS``), it runs T2T's
datagen as ``bin/t2t_datagen.py`` does (seeds 429459, then ``problem.generate_data(data_dir,
tmp_dir, None)``) on a copy of that folder, the five transduction problems as a subclass with 150
samples (T2T's draw 100,000 or 1,000,000), and writes ``<out>/t2t_1.15.7_text_tasks.json``: the
files written, the vocabulary's sha256, each shard's record count, the sha256 of the records'
feature ids shard by shard, each split's samples (not the transduction ones: they are random
draws), problem hparams, ``eval_metrics()`` and the names T2T registers in each module.
``conll2002_ner`` (T2T's base) records the exception its datagen raises.

One change to T2T: ``subject_verb_agreement.load_examples`` hands ``csv.DictReader`` the
gzip's bytes, which Python 3's csv refuses; its ``gzip.open`` is made to give UTF-8 text, what
its Python 2 code read. In T2T's venv (README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_text_tasks_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_text_tasks_reference
"""

import argparse
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
import types
import zipfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DATE = 1_600_000_000
ZIP_DATE = (2020, 9, 13, 12, 0, 0)
SMALL_SAMPLES = 150
WORDS = (
    "the a cat dog king queen thou thee art doth hath man woman child sees loves hates near "
    "under very not never café naïve sword crown river house old new good bad runs sleeps"
).split()
MODULES = (
    "transduction_problems pointer_generator_word subject_verb_agreement style_transfer "
    "paraphrase_ms_coco conll_ner"
).split()
TRANSDUCTION = (
    "copy_sequence copy_sequence_small reverse_sequence reverse_sequence_small "
    "flip_bi_gram_sequence"
).split()
PROBLEMS = TRANSDUCTION + [
    "text2text_copyable_tokens",
    "sva_number_prediction",
    "sva_language_modeling",
    "style_transfer_shakespeare_to_modern",
    "style_transfer_modern_to_shakespeare",
    "style_transfer_shakespeare_to_modern_characters",
    "style_transfer_modern_to_shakespeare_characters",
    "paraphrase_generation_ms_coco_problem1d",
    "paraphrase_generation_ms_coco_problem2d",
    "paraphrase_generation_ms_coco_problem1d_characters",
    "paraphrase_generation_ms_coco_problem2d_characters",
    "conll2002_ner",
    "conll2002_es_ner",
    "conll2002_nl_ner",
]
SVA_COLUMNS = (
    "sentence orig_sentence pos_sentence subj verb subj_pos has_rel has_nsubj verb_pos "
    "subj_index verb_index n_intervening last_intervening n_diff_intervening distance "
    "max_depth all_nouns nouns_up_to_verb"
).split()


def words(rng: random.Random, low: int = 3, high: int = 9) -> list[str]:
    return [rng.choice(WORDS) for _ in range(rng.randint(low, high))]


def text(rows: list[str]) -> bytes:
    return "".join(row + "\n" for row in rows).encode("utf-8")


def write_tar(path: str, members: dict[str, bytes]) -> None:
    with open(path, "wb") as f, gzip.GzipFile("", "wb", fileobj=f, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w") as tar:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size, info.mtime = len(data), DATE
                tar.addfile(info, io.BytesIO(data))


def write_zip(path: str, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=ZIP_DATE), data)


def sva(rng: random.Random, d: str) -> None:
    rows = ["\t".join(SVA_COLUMNS)]
    for i in range(320):
        sentence = words(rng, 4, 12)
        verb = rng.randint(2, len(sentence))
        n_int = rng.randint(0, 2)
        diff = n_int if rng.random() < 0.6 else 0
        values = {c: f"x{i}" for c in SVA_COLUMNS}
        values.update(
            sentence=" ".join(sentence),
            verb_pos=rng.choice(["VBZ", "VBP"]),
            verb_index=str(verb),
            n_intervening=str(n_int),
            n_diff_intervening=str(diff),
            subj_index=str(rng.randint(1, verb)),
        )
        rows.append("\t".join(values[c] for c in SVA_COLUMNS))
    with open(f"{d}/agr_50_mostcommon_10K.tsv.gz", "wb") as f:
        with gzip.GzipFile("", "wb", fileobj=f, mtime=0) as gz:
            gz.write(text(rows))


def shakespeare(rng: random.Random, d: str) -> None:
    for split, n in (("train", 40), ("dev", 10)):
        original = [" ".join(words(rng)) + rng.choice([".", " !", "?"]) for _ in range(n)]
        modern = [" ".join(words(rng)) for _ in range(n)]
        members = {f"{split}.original": text(original), f"{split}.modern": text(modern)}
        write_tar(f"{d}/shakespeare.{split}.tgz", members)


def coco(rng: random.Random, d: str) -> None:
    members = {}
    for split, images in (("train", 12), ("val", 4)):
        annotations = []
        for k in range(images * 4):
            image = 100 + rng.randint(0, images - 1)
            caption = " ".join(words(rng)).capitalize() + rng.choice([".", " .", "", ".\n", " "])
            annotations.append({"image_id": image, "id": k, "caption": caption})
        data = {"info": {}, "images": [], "annotations": annotations}
        members[f"annotations/captions_{split}2014.json"] = json.dumps(data).encode()
    write_zip(f"{d}/captions_train-val2014.zip", members)


def conll(rng: random.Random, d: str) -> None:
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "B-ORG", "B-MISC"]
    members = {}
    for lang in ("esp", "ned"):
        for split, n in (("train", 30), ("testa", 6), ("testb", 5)):
            rows = ["-DOCSTART- -DOCSTART- O"] if lang == "ned" else []
            for i in range(n):
                rows += [f"{w} NC {rng.choice(tags)}" for w in words(rng, 2, 8)]
                rows += [""] * (2 if i == 3 else 1)
            rows += [f"{w} NC O" for w in words(rng, 1, 3)]  # no blank line at the end
            members[f"conll2002/{lang}.{split}"] = text(rows)
    members["conll2002/README"] = b"synthetic\n"
    write_zip(f"{d}/conll2002.zip", members)


def tmpdir_tokens(rng: random.Random, d: str) -> None:
    known = WORDS[:20]
    with open(f"{d}/vocab.txt", "wb") as f:
        f.write(text(known))
    for split, n in (("train", 30), ("eval", 8)):
        inputs = [" ".join(words(rng)) for _ in range(n)]
        targets = [" ".join(rng.sample(s.split(), min(3, len(s.split())))) for s in inputs]
        targets = [t + " " + rng.choice(["zebra", "the", "sword"]) for t in targets]
        with open(f"{d}/inputs.{split}.txt", "wb") as f:
            f.write(text(inputs))
        with open(f"{d}/targets.{split}.txt", "wb") as f:
            f.write(text(targets))


def write_corpora(tmp: str) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    rng = random.Random(2020)
    sva(rng, tmp)
    shakespeare(rng, tmp)
    coco(rng, tmp)
    conll(rng, tmp)
    tmpdir_tokens(rng, tmp)


def shard_ids(tf, path: str) -> list:
    """Each record's {feature: ids}, in file order."""
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append({k: list(feature[k].int64_list.value) for k in sorted(feature)})
    return found


def digest(value) -> str:
    blob = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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


def small(problem):
    """The transduction problem with ``SMALL_SAMPLES`` samples a split, same name."""
    base = type(problem)
    sizes = {"num_samples": lambda self, split: SMALL_SAMPLES}
    cls = type("Small" + base.__name__, (base,), sizes)
    cls.name = problem.name
    return cls()


def run_problem(tf, np, registry, name: str, tmp_dir: str, out: str) -> dict:
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_dir, scratch)
    os.makedirs(data_dir)
    problem = registry.problem(name)
    if name in TRANSDUCTION:
        problem = small(problem)
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
    random.seed(SEED)
    np.random.seed(SEED)
    try:
        problem.generate_data(data_dir, scratch, None)
    except Exception as e:  # noqa: BLE001 (T2T's abstract base)
        shutil.rmtree(work)
        return {"class": type(problem).__name__, "error": type(e).__name__}
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if f.startswith(name)}
    counts: dict = {}
    for shard in sorted(shards):
        counts.setdefault(shard.rsplit("-", 4)[-4], []).append(len(shards[shard]))
    vocab_file = problem.vocab_filename if problem.vocab_type != "character" else None
    vocab_sha = None
    if vocab_file:
        with open(os.path.join(data_dir, vocab_file), "rb") as f:
            vocab_sha = hashlib.sha256(f.read()).hexdigest()
    facts = {
        "class": type(registry.problem(name)).__name__,
        "other_files": [f for f in files if f not in shards],
        "vocab_file": vocab_file,
        "vocab_sha256": vocab_sha,
        "shard_records": counts,
        "records_sha256": {f: digest(r) for f, r in shards.items()},
        "problem_hparams": hparams_facts(problem, data_dir),
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_type": problem.vocab_type,
        "dataset_splits": [dict(s) for s in problem.dataset_splits],
        "tmp_files_after": sorted(os.listdir(scratch)),
    }
    if name not in TRANSDUCTION:
        facts["samples"] = {}
        for entry in problem.dataset_splits:
            samples = list(problem.generate_samples(data_dir, scratch, entry["split"]))
            facts["samples"][entry["split"]] = {
                "count": len(samples),
                "first": samples[0],
                "sha256": digest(samples),
            }
    if hasattr(problem, "num_classes"):
        facts["num_classes"] = problem.num_classes
        facts["class_labels"] = problem.class_labels(data_dir)
    shutil.rmtree(work)
    return facts


def text_gzip(path):
    """What ``gzip.open`` gave T2T's Python 2 csv reader: the file's text."""
    return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")


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

    for module in MODULES:  # registers the problems
        importlib.import_module(f"tensor2tensor.data_generators.{module}")
    from tensor2tensor.data_generators import subject_verb_agreement

    subject_verb_agreement.gzip = types.SimpleNamespace(open=text_gzip)
    tmp_dir = os.path.join(args.out, "tmp")
    write_corpora(tmp_dir)
    summary = {"random_seed": SEED, "small_samples": SMALL_SAMPLES, "problems": {}}
    for name in PROBLEMS:
        summary["problems"][name] = facts = run_problem(tf, np, registry, name, tmp_dir, args.out)
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
    path = os.path.join(args.out, "t2t_1.15.7_text_tasks.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
