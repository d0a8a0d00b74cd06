"""What tensor2tensor 1.15.7's datagen writes for a usr_dir that downloads its corpus
(reference test data for tests/test_t2t_usr_dir_download.py).

Writes a tiny corpus into ``<out>/served`` (a ``.tgz`` of a parallel pair, a dev ``.tsv``, a
tsv for the Google Drive stand-in; fixed dates, so the bytes are the same each run), serves it
on 127.0.0.1 with the tests' own loopback server (``tests/loopback_http.py``, its Drive path
answering with the confirm cookie), points ``$TINY_CORPUS_URL`` at it, imports
``tests/data/t2t_usr_dir_download`` with T2T's ``utils/usr_dir.py:import_usr_dir`` and, per
problem, does what ``bin/t2t_datagen.py`` does (seeds, then ``problem.generate_data(data_dir,
tmp_dir, None)``) with an empty ``tmp_dir``: T2T downloads the files itself
(``generator_utils.maybe_download`` through ``translate.py, compile_data`` and
``generate_lines_for_vocab``; ``maybe_download_from_drive``). The data dir is copied to
``<out>/data``, with a JSON of its files, the files T2T left in ``tmp_dir`` and the requests
the server saw. Records are made in sorted feature order as in make_t2t_usr_dir_reference.py
(a new process until protobuf's hash order is the sorted one).

Run it in T2T's own virtualenv (README.md here)::

    /work/venv-t2t/bin/python tools/t2t_reference/make_t2t_download_reference.py \
        --shim=../shared/t2t_shim --out=tests/data/t2t_usr_dir_download_reference
"""

import argparse
import gzip
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from make_t2t_usr_dir_reference import SEED, corpus, sorted_records  # noqa: E402

from tests.loopback_http import serving  # noqa: E402

PROBLEMS = ["tiny_download_translate", "tiny_drive_text"]
USR_DIR = os.path.join(ROOT, "tests", "data", "t2t_usr_dir_download")


def _text(lines) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def served_files() -> dict[str, bytes]:
    """The corpus the server hands out, byte for byte the same each run."""
    rng = random.Random(2055)
    train, dev, drive = corpus(rng, 30), corpus(rng, 8), corpus(rng, 20)
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for name, column in (("tiny_parallel/train.en", 0), ("tiny_parallel/train.de", 1)):
                data = _text(p[column] for p in train)
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), 1767225600, 0o644
                tar.addfile(info, io.BytesIO(data))
    return {
        "tiny_parallel.tgz": raw.getvalue(),
        "tiny_dev.tsv": _text([f"{s}\t{t}" for s, t in dev] + ["no tab on this line"]),
        "tiny_drive.tsv": _text(f"{s}\t{t}" for s, t in drive),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (served/, data/, JSON)")
    parser.add_argument("--attempts", type=int, default=10, help="runs for sorted records")
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.utils import registry, usr_dir

    files = served_files()
    served = os.path.join(args.out, "served")
    shutil.rmtree(served, ignore_errors=True)
    os.makedirs(served)
    for name, data in files.items():
        with open(os.path.join(served, name), "wb") as f:
            f.write(data)
    usr_dir.import_usr_dir(USR_DIR)
    work = tempfile.mkdtemp()
    data_dir, tmp_dir = os.path.join(work, "data"), os.path.join(work, "tmp")
    os.makedirs(data_dir)
    with serving(files) as server:
        os.environ["TINY_CORPUS_URL"] = server.url
        for name in PROBLEMS:  # bin/t2t_datagen.py, main
            tf.compat.v1.set_random_seed(SEED)
            random.seed(SEED)
            np.random.seed(SEED)
            registry.problem(name).generate_data(data_dir, tmp_dir, None)
        requests = [path for path, _ in server.requests]
    data_out = os.path.join(args.out, "data")
    shutil.rmtree(data_out, ignore_errors=True)
    shutil.copytree(data_dir, data_out)
    shards = {
        f: sorted_records(tf, os.path.join(data_out, f))
        for f in sorted(os.listdir(data_out))
        if "-" in f
    }
    summary = {
        "problems": PROBLEMS,
        "random_seed": SEED,
        "files": sorted(os.listdir(data_out)),
        "examples_per_shard": {f: n for f, (_, n) in shards.items()},
        "all_records_in_sorted_feature_order": all(a == n for a, n in shards.values()),
        "requests": requests,
        "tmp_files_after_datagen": sorted(
            os.path.relpath(os.path.join(d, f), tmp_dir)
            for d, _, names in os.walk(tmp_dir)
            for f in names
        ),
        "versions": {
            "tensor2tensor": "1.15.7",
            "tensorflow": tf.__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
        },
    }
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
