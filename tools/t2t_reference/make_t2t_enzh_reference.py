"""What tensor2tensor 1.15.7's datagen writes for ``translate_enzh_wmt32k`` and
``translate_enzh_wmt8k`` (``data_generators/translate_enzh.py``): reference test data for
``t2t_repro/t2t_compat/translate_enzh.py``.

The corpora are not ours to ship: this writes SYNTHETIC ones (toy English sentences and their
word-for-word Chinese, fixed seed) under T2T's archive and file names into ``<out>/tmp``: News
Commentary v13's ``training-parallel-nc-v13.tgz``, the ``.sgm`` dev files in ``dev.tgz``, the
CWMT ``cwmt.tgz`` (its 24 corpora, 48 files) and the UN corpus's ``UNv1.0.en-zh.tar.gz``. It
runs three cases as ``bin/t2t_datagen.py`` runs them (seeds 429459 before each problem,
``problem.generate_data(data_dir, tmp_dir, None)``), each from T2T's module state as a fresh
process has it: ``translate_enzh_wmt8k`` alone, ``translate_enzh_wmt32k`` alone, and
``--problem=translate_enzh*`` (32k then 8k in one process and one data and tmp dir: T2T's
``get_training_dataset`` extends the module's News Commentary list in place, so the 8k problem
then reads the CWMT and UN corpora, twice). Writes ``<out>/t2t_1.15.7_enzh.json``: per case the
files written, both vocabularies' sha256, each shard's record count and the sha256 of its
records' ids (T2T serializes a record's feature map in its process's hash order, so records
are compared by ids, which hold the shuffle), the tmp files after and the compiled files'
sha256; per problem its hparams and T2T's encodings of a few sentences; T2T's corpus lists.
In T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_enzh_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_enzh_reference
"""

import argparse
import copy
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
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DATE = 1_600_000_000  # archive members' mtime: the same bytes on every run
EN = "the a cat dog house river sees likes small old red near city 2017 year people".split()
ZH = "这 一只 猫 狗 房子 河 看见 喜欢 小 老 红色 附近 城市 2017 年 人们".split()
CASES = {  # case: the problems t2t_datagen runs in it, in its (sorted) order
    "translate_enzh_wmt8k": ["translate_enzh_wmt8k"],
    "translate_enzh_wmt32k": ["translate_enzh_wmt32k"],
    "translate_enzh*": ["translate_enzh_wmt32k", "translate_enzh_wmt8k"],
}
SENTENCES = {  # what the recorded encodings encode: inputs English, targets Chinese
    "inputs": ["the small cat sees a dog", "zebra unknown words 42"],
    "targets": ["小猫看见一只狗。", "斑马，未知的字"],
}


def pairs(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """``n`` toy pairs: English words and their Chinese, unspaced as Chinese is written."""
    out = []
    for _ in range(n):
        idx = [rng.randrange(len(EN)) for _ in range(rng.randint(2, 8))]
        zh = "".join(ZH[i] for i in idx)
        if rng.random() < 0.3:
            zh = zh[: len(zh) // 2] + "，" + zh[len(zh) // 2 :]
        out.append((" ".join(EN[i] for i in idx) + " .", zh + "。"))
    return out


def text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def parallel(rng: random.Random, n: int, name1: str, name2: str) -> dict[str, bytes]:
    got = pairs(rng, n)
    return {name1: text([p[0] for p in got]), name2: text([p[1] for p in got])}


def sgm(lines: list[str], head: str, tail: str) -> bytes:
    """A WMT ``.sgm`` file: header lines T2T's ``_preprocess_sgm`` drops, one seg a line."""
    body = [head, '<doc sysid="ref" docid="x" genre="news" origlang="zh">', "<p>"]
    body += [f'<seg id="{i}">{line}</seg>' for i, line in enumerate(lines, 1)]
    return text([*body, "</p>", "</doc>", tail])


def write_tar(path: str, members: dict[str, bytes]) -> None:
    """A gzipped tar archive, the same bytes on every run."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), DATE
            tar.addfile(info, io.BytesIO(data))
    with open(path, "wb") as f:
        f.write(gzip.compress(buffer.getvalue(), mtime=DATE))


def write_corpora(tmp: str, cwmt_files: list[tuple[str, str]]) -> None:
    """The four archives under T2T's names (``cwmt_files``: T2T's CWMT file pairs)."""
    rng = random.Random(2018)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    nc = "training-parallel-nc-v13/news-commentary-v13.zh-en"
    train = pairs(rng, 150)
    train[4] = ("an English line whose Chinese is empty", "")  # compile_data skips the pair
    train[9] = ("  spaced   words  ", "  两边有空格  ")  # T2T strips the lines
    write_tar(
        f"{tmp}/training-parallel-nc-v13.tgz",
        {f"{nc}.en": text([p[0] for p in train]), f"{nc}.zh": text([p[1] for p in train])},
    )
    dev = pairs(rng, 15)
    src = sgm([p[0] for p in dev], '<srcset setid="newsdev2017" srclang="any">', "</srcset>")
    ref_head = '<refset setid="newsdev2017" srclang="any" trglang="zh">'  # not dropped: None
    ref = sgm([p[1] for p in dev], ref_head, "</refset>")
    dev_files = {"dev/newsdev2017-enzh-src.en.sgm": src, "dev/newsdev2017-enzh-ref.zh.sgm": ref}
    write_tar(f"{tmp}/dev.tgz", dev_files)
    cwmt = {}
    for en_file, zh_file in cwmt_files:
        cwmt.update(parallel(rng, 3, en_file, zh_file))
    write_tar(f"{tmp}/cwmt.tgz", cwmt)
    un = parallel(rng, 30, "en-zh/UNv1.0.en-zh.en", "en-zh/UNv1.0.en-zh.zh")
    write_tar(f"{tmp}/UNv1.0.en-zh.tar.gz", un)


def shard_ids(tf, path: str) -> list[list[list[int]]]:
    """Each record's [inputs ids, targets ids], in file order."""
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in ("inputs", "targets")])
    return found


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ids_digest(records: list) -> str:
    return digest(json.dumps(records, separators=(",", ":")).encode())


def file_digests(folder: str, names: list[str]) -> dict[str, str]:
    found = {}
    for name in names:
        with open(os.path.join(folder, name), "rb") as f:
            found[name] = digest(f.read())
    return found


def problem_facts(problem, data_dir: str, hparam) -> dict:
    """T2T's problem hparams and encoders on the data dir its datagen wrote."""
    hp = problem.get_hparams(hparam.HParams(data_dir=data_dir))
    encoders = problem.feature_encoders(data_dir)
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_filename": problem.vocab_filename,
        "source_vocab_name": problem.source_vocab_name,
        "target_vocab_name": problem.target_vocab_name,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
        "encoders": {k: type(e).__name__ for k, e in sorted(encoders.items())},
        "encodings": {
            k: [encoders[k].encode(s) for s in sentences] for k, sentences in SENTENCES.items()
        },
    }


def run_case(tf, registry, problems: list[str], tmp_src: str) -> tuple[dict, dict]:
    """One t2t_datagen run of ``problems`` in a fresh data and tmp dir: what it left."""
    work = tempfile.mkdtemp()
    data_dir, tmp_dir = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_src, tmp_dir)
    os.makedirs(data_dir)
    import numpy as np

    for name in problems:
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
        random.seed(SEED)
        np.random.seed(SEED)
        registry.problem(name).generate_data(data_dir, tmp_dir, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if f.startswith("tra")}
    tmp_after = sorted(os.listdir(tmp_dir))
    found = {
        "files": files,
        "vocab_sha256": file_digests(data_dir, [f for f in files if f.startswith("vocab.")]),
        "records": {f: len(r) for f, r in shards.items()},
        "records_sha256": {f: ids_digest(r) for f, r in shards.items()},
        "tmp_files_after": tmp_after,
        "compiled_sha256": file_digests(tmp_dir, [f for f in tmp_after if f.startswith("wmt_")]),
    }
    return found, {"work": work, "data_dir": data_dir}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import tensorflow as tf
    from tensor2tensor.data_generators import translate_enzh
    from tensor2tensor.utils import hparam, registry

    cwmt_files = [tuple(d[1]) for d in translate_enzh._CWMT_TRAIN_DATASETS]
    tmp_src = os.path.join(args.out, "tmp")
    write_corpora(tmp_src, cwmt_files)
    pristine = copy.deepcopy(translate_enzh._NC_TRAIN_DATASETS)
    summary = {"random_seed": SEED, "sentences": SENTENCES, "cases": {}, "problems": {}}
    summary["datasets"] = {
        name: [[url, list(files)] for url, files in getattr(translate_enzh, f"_{name}_DATASETS")]
        for name in ("NC_TRAIN", "NC_TEST", "UN_TRAIN", "CWMT_TRAIN")
    }
    for case, problems in CASES.items():
        translate_enzh._NC_TRAIN_DATASETS[:] = copy.deepcopy(pristine)  # a fresh process's
        found, where = run_case(tf, registry, problems, tmp_src)
        found["nc_train_datasets_after"] = len(translate_enzh._NC_TRAIN_DATASETS)
        summary["cases"][case] = found
        if len(problems) == 1:
            name = problems[0]
            facts = problem_facts(registry.problem(name), where["data_dir"], hparam)
            summary["problems"][name] = facts
        shutil.rmtree(where["work"])
        print(case, sum(found["records"].values()), "records")
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(args.out, "t2t_1.15.7_enzh.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
