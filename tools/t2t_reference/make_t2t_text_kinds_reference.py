"""What tensor2tensor 1.15.7 makes of T2T's text iterators and its ``TextConcat2ClassProblem``
and ``ChoppedTextProblem`` (reference test data for ``tests/test_t2t_usr_dir_iterators.py``).

Reads the texts committed in ``<out>/tmp`` and writes ``<out>/t2t_1.15.7_text_kinds.json``:

- ``iterators``: each of T2T's ``text_problems`` iterators on the ``iter_*.txt`` files, as
  lists (``text2self_txt_iterator``, ``text2class_txt_iterator`` with integer labels and with
  ``class_strs``, ``txt_and_label_iterator``, ``text2text_txt_iterator_with_label``,
  ``text2text_txt_iterator_with_index``, ``text2real_txt_iterator``);
- ``datagen``: for each problem of ``tests/data/t2t_usr_dir_text_kinds`` (imported with T2T's
  ``utils/usr_dir.py:import_usr_dir``), its vocab file and each shard's examples in order
  (feature -> ids), after what ``bin/t2t_datagen.py`` does per problem: ``set_random_seed``
  (429459), then ``generate_data(data_dir, tmp_dir, None)``, or for a ``multiprocess_generate``
  problem a ``multiprocessing.Pool`` (made before ``prepare_to_generate``, as there) mapping
  ``generate_data(data_dir, tmp_dir, task_id)`` over the tasks (one worker). Python reseeds
  ``random`` in a forked worker from the OS (``os.register_at_fork``), so such a problem's
  shuffles, and the order of its shards' examples, differ from run to run in T2T itself;
  its vocabulary and each shard's examples do not.

The examples are compared as ids, not bytes: T2T lists a record's features in a per-process
hash order. Run it in T2T's own virtualenv (README.md here)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_text_kinds_reference.py \
        --shim=../shared/t2t_shim --usr_dir=tests/data/t2t_usr_dir_text_kinds \
        --out=tests/data/t2t_usr_dir_text_kinds_reference
"""

import argparse
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile

# the example usr_dir's script, beside this one: t2t_datagen's --random_seed default
from make_t2t_usr_dir_reference import SEED

PROBLEMS = ["paired_claims", "chopped_stories"]
LABELS = ["entailment", "neutral", "contradiction"]


def iterator_reference(text_problems, tmp: str) -> dict:
    path = lambda name: os.path.join(tmp, name)  # noqa: E731
    source = path("iter_source.txt")
    runs = {
        "text2self_txt_iterator": text_problems.text2self_txt_iterator(source),
        "text2class_txt_iterator": text_problems.text2class_txt_iterator(
            source, path("iter_int_labels.txt")
        ),
        "text2class_txt_iterator_class_strs": text_problems.text2class_txt_iterator(
            path("premises.txt"), path("labels.txt"), class_strs=LABELS
        ),
        "txt_and_label_iterator": text_problems.txt_and_label_iterator(path("iter_extra.txt")),
        "text2text_txt_iterator_with_label": text_problems.text2text_txt_iterator_with_label(
            source, path("iter_extra.txt")
        ),
        "text2text_txt_iterator_with_index": text_problems.text2text_txt_iterator_with_index(
            source, path("hypotheses.txt")
        ),
        "text2real_txt_iterator": text_problems.text2real_txt_iterator(
            source, path("iter_real.txt")
        ),
    }
    return {name: list(samples) for name, samples in runs.items()}


def _generate_task(arg) -> None:
    from tensor2tensor.utils import registry

    name, data_dir, tmp_dir, task_id = arg
    registry.problem(name).generate_data(data_dir, tmp_dir, task_id)


def shard_examples(tf, path: str) -> list[dict]:
    out = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        features = tf.train.Example.FromString(record).features.feature
        out.append({k: list(features[k].int64_list.value) for k in sorted(features)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--usr_dir", required=True, help="tests/data/t2t_usr_dir_text_kinds")
    parser.add_argument("--out", required=True, help="the folder holding tmp/; gets the JSON")
    args = parser.parse_args()

    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import text_problems
    from tensor2tensor.utils import registry, usr_dir

    out = os.path.abspath(args.out)
    tmp = os.path.join(out, "tmp")
    usr_dir.import_usr_dir(os.path.abspath(args.usr_dir))
    datagen = {}
    for name in PROBLEMS:
        data_dir = tempfile.mkdtemp()
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, main
        random.seed(SEED)
        np.random.seed(SEED)
        problem = registry.problem(name)
        if problem.multiprocess_generate:  # generate_data_for_registered_problem
            pool = multiprocessing.Pool(processes=1)
            problem.prepare_to_generate(data_dir, tmp)
            tasks = [(name, data_dir, tmp, task) for task in range(problem.num_generate_tasks)]
            pool.map(_generate_task, tasks)
            pool.close()
        else:
            problem.generate_data(data_dir, tmp, None)
        files = sorted(os.listdir(data_dir))
        vocab = [f for f in files if f.startswith("vocab.")]
        with open(os.path.join(data_dir, vocab[0]), encoding="utf-8", newline="") as f:
            vocab_text = f.read()
        datagen[name] = {
            "files": files,
            "vocab_file": vocab[0],
            "vocab": vocab_text,
            "shards": {
                f: shard_examples(tf, os.path.join(data_dir, f)) for f in files if "-of-" in f
            },
        }
        shutil.rmtree(data_dir)
    summary = {
        "iterators": iterator_reference(text_problems, tmp),
        "datagen": datagen,
        "random_seed": SEED,
        "versions": {
            "tensor2tensor": "1.15.7",
            "tensorflow": tf.__version__,
            "python": sys.version.split()[0],
        },
    }
    with open(os.path.join(out, "t2t_1.15.7_text_kinds.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print("wrote", os.path.join(out, "t2t_1.15.7_text_kinds.json"))


if __name__ == "__main__":
    main()
