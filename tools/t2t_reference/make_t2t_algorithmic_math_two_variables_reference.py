"""What tensor2tensor 1.15.7's datagen writes for ``algorithmic_math_two_variables``
(``data_generators/algorithmic_math_two_variables.py``): reference test data for
``t2t_repro/t2t_compat/algorithmic_math_two_variables.py``.

The data set is not ours to ship and T2T downloads it: this writes a SYNTHETIC
``mathematical_language_understanding_train.tar.gz`` into ``<out>/tmp`` (fixed seed, fixed
member and gzip times), whose one member ``symbolic_math_train.txt`` holds 300 lines in the
real format (``y=691,x=-999,y*x:-690309``: x and y in [-1000, 1000) in either order, ``+``,
``-`` and ``*`` on either variable) plus a few edge lines: one ending ``\\r\\n``, two problems
joined by a lone ``\\r``, one with spaces and a tab around it, one with no answer after its
``:`` and one with no problem before it. T2T fetches the archive with ``requests.get`` on
every call: the module's ``requests`` is replaced by a stand-in returning the archive's bytes
(no network) and recording each request's URL and headers. Then T2T's datagen runs as
``bin/t2t_datagen.py`` runs it (seeds 429459, ``problem.generate_data(data_dir, tmp_dir)``)
and ``<out>/t2t_1.15.7_algorithmic_math_two_variables.json`` gets the data-dir files, each
shard's records in order, decoded (T2T's ``ByteTextEncoder``, EOS removed) and as the sha256
of every feature's ids (``tests/t2t_records.py``'s ``ids_digest(path, None)``), the tmp files
after, the requests, the problem's hparams and encoders, and, for archives whose file has a
line T2T cannot read (no ``:``, two, a blank last line, bytes that are not UTF-8), the
exception T2T raises and how many samples it yielded before it. In T2T's venv
(tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python \\
        tools/t2t_reference/make_t2t_algorithmic_math_two_variables_reference.py \\
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_algorithmic_math_two_variables_reference
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
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DATE = 1_600_000_000  # the member's mtime and gzip's: the same bytes on every run
NAME = "algorithmic_math_two_variables"
ARCHIVE = "mathematical_language_understanding_train.tar.gz"
MEMBER = "symbolic_math_train.txt"
LINES = 300
BAD = {  # case: (line index replaced, what it becomes), in a file of 20 good lines
    "no_colon": (6, b"x=5,y=-3,x*y"),
    "two_colons": (11, b"x=5,y=-3,x*y:-15:0"),
    "blank_last_line": (20, b""),  # the file ends "\n\n"
    "not_utf8": (3, b"x=5,y=\xff3,x*y:-15"),
}


def problem_line(rng: random.Random) -> str:
    """A line of the real data: both variables assigned, then an expression and its value."""
    x, y = rng.randrange(-1000, 1000), rng.randrange(-1000, 1000)
    names = ("x", "y") if rng.random() < 0.5 else ("y", "x")
    values = {"x": x, "y": y}
    a, op, b = rng.choice("xy"), rng.choice("+-*"), rng.choice("xy")
    answer = {"+": values[a] + values[b], "-": values[a] - values[b], "*": values[a] * values[b]}
    assignment = ",".join(f"{n}={values[n]}" for n in names)
    return f"{assignment},{a}{op}{b}:{answer[op]}"


def main_file(rng: random.Random) -> bytes:
    lines = [problem_line(rng).encode() + b"\n" for _ in range(LINES)]
    lines[0] = b"y=691,x=-999,y*x:-690309\n"  # T2T's docstring's examples
    lines[1] = b"y=210,x=-995,y+x:-785\n"
    lines[2] = b"x=-995,y=210,x*x:990025\n"
    lines[17] = lines[17][:-1] + b"\r\n"  # a Windows line end
    lines[40] = lines[40][:-1] + b"\r" + lines[41]  # two problems joined by a lone \r
    del lines[41]
    lines[77] = b"  \t" + lines[77][:-1] + b" \n"  # T2T strips the line
    lines[123] = b"x=1,y=2,x+y:\n"  # empty targets: EOS alone
    lines[200] = b":7\n"  # empty inputs
    return b"".join(lines)


def bad_file(rng: random.Random, case: str) -> bytes:
    lines = [problem_line(rng).encode() for _ in range(20)]
    index, line = BAD[case]
    if index == len(lines):
        lines.append(line)
    else:
        lines[index] = line
    return b"".join(line + b"\n" for line in lines)


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


def write_archives(tmp: str, bad_root: str) -> None:
    """``tmp``: the archive datagen reads; ``bad_root/<case>/``: one for each bad line."""
    rng = random.Random(1812_02825)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    write_tar(os.path.join(tmp, ARCHIVE), {MEMBER: main_file(rng)})
    for case in BAD:
        os.makedirs(os.path.join(bad_root, case))
        write_tar(os.path.join(bad_root, case, ARCHIVE), {MEMBER: bad_file(rng, case)})


def stand_in_requests(module, archive: str, requests: list) -> None:
    """T2T's ``requests.get(_URL, headers=headers)`` answered with the archive's bytes."""
    with open(archive, "rb") as f:
        data = f.read()

    def get(url, headers=None, **kwargs):
        requests.append({"url": url, "headers": dict(headers or {}), "kwargs": sorted(kwargs)})
        return types.SimpleNamespace(content=data, status_code=200)

    module.requests = types.SimpleNamespace(get=get)


def seed(tf, np) -> None:
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
    random.seed(SEED)
    np.random.seed(SEED)


def shard_facts(tf, encoder, path: str) -> tuple[list, str]:
    """The records decoded ([inputs, targets], EOS removed) and the sha256 of their ids."""
    ids, decoded = [], []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found = {k: list(feature[k].int64_list.value) for k in sorted(feature)}
        ids.append(found)
        assert found["inputs"][-1] == found["targets"][-1] == 1, found  # EOS
        decoded.append([encoder.decode(found[k][:-1]) for k in ("inputs", "targets")])
    text = json.dumps(ids, separators=(",", ":"))
    return decoded, hashlib.sha256(text.encode()).hexdigest()


def problem_facts(problem, data_dir: str, hparam) -> dict:
    """T2T's problem hparams and encoders (``tests/t2t_records.py``'s ``problem_facts``)."""
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
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
        "vocab_type": problem.vocab_type,
        "is_generate_per_split": problem.is_generate_per_split,
        "encoders": {k: type(e).__name__ for k, e in sorted(encoders.items())},
        "class": type(problem).__name__,
    }


def run_datagen(tf, np, module, registry, tmp_src: str) -> tuple[dict, str]:
    """T2T's datagen on a copy of ``tmp_src``: what it wrote and left (and its data dir)."""
    work = tempfile.mkdtemp()
    data_dir, tmp_dir = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(tmp_src, tmp_dir)
    os.makedirs(data_dir)
    requests: list = []
    stand_in_requests(module, os.path.join(tmp_src, ARCHIVE), requests)
    seed(tf, np)
    problem = registry.problem(NAME)
    problem.generate_data(data_dir, tmp_dir)
    encoder = problem.get_or_create_vocab(data_dir, tmp_dir)
    files = sorted(os.listdir(data_dir))
    records, digests = {}, {}
    for name in files:
        records[name], digests[name] = shard_facts(tf, encoder, os.path.join(data_dir, name))
    found = {
        "files": files,
        "records": records,
        "records_sha256": digests,
        "tmp_files_after": sorted(os.listdir(tmp_dir)),
        "requests": requests,
    }
    return found, work


def run_bad(tf, np, module, registry, case_dir: str) -> dict:
    """The exception T2T's datagen raises on an archive with a bad line, and the samples its
    ``generate_samples`` yielded before (so the bad line is the next one)."""
    work = tempfile.mkdtemp()
    data_dir, tmp_dir = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(case_dir, tmp_dir)
    os.makedirs(data_dir)
    stand_in_requests(module, os.path.join(case_dir, ARCHIVE), [])
    problem = registry.problem(NAME)
    yielded = []
    original = type(problem).generate_samples

    def counted(self, *args):
        for sample in original(self, *args):
            yielded.append(sample)
            yield sample

    type(problem).generate_samples = counted
    seed(tf, np)
    try:
        problem.generate_data(data_dir, tmp_dir)
        error = None
    except Exception as e:  # noqa: BLE001 (what T2T raises is the fact recorded)
        error = {"type": type(e).__name__, "message": str(e)}
    finally:
        type(problem).generate_samples = original
    shutil.rmtree(work)
    line = BAD[os.path.basename(case_dir)][0] + 1
    return {"error": error, "samples_before_error": len(yielded), "bad_line": line}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, bad/, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import algorithmic_math_two_variables as module
    from tensor2tensor.utils import hparam, registry

    tmp_src, bad_root = os.path.join(args.out, "tmp"), os.path.join(args.out, "bad")
    shutil.rmtree(bad_root, ignore_errors=True)
    write_archives(tmp_src, bad_root)
    found, work = run_datagen(tf, np, module, registry, tmp_src)
    problem = registry.problem(NAME)
    summary = {
        "random_seed": SEED,
        "url": module._URL,
        "datagen": found,
        "problem": problem_facts(problem, os.path.join(work, "data"), hparam),
        "registered": sorted(
            n
            for n in registry.list_base_problems()
            if type(registry.problem(n)).__module__ == module.__name__
        ),
        "bad_lines": {
            case: run_bad(tf, np, module, registry, f"{bad_root}/{case}") for case in BAD
        },
        "versions": {
            "tensor2tensor": metadata.version("tensor2tensor"),
            "tensorflow": tf.__version__,
            "python": sys.version.split()[0],
        },
    }
    shutil.rmtree(work)
    print(NAME, sum(map(len, found["records"].values())), "records")
    path = os.path.join(args.out, f"t2t_1.15.7_{NAME}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
