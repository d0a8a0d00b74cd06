"""A cluster's start-up handshake, exit codes and peer-failure lines (#36, #48), in process:
the messages and decisions, without starting a cluster (tests/test_multiworker.py runs real
two-worker clusters; tests/test_watchdog.py the watchdog, in processes of its own)."""

import json
import re
from types import SimpleNamespace

import pytest
import tensorflow as tf

from t2t_repro.training.cluster import exit_codes, startup_handshake
from t2t_repro.training.cluster.startup_handshake import first_difference, worker_seed
from t2t_repro.training.cluster.tf_config import Cluster
from t2t_repro.training.run_setup import TrainingError


def facts(**changes):
    base = {
        "restored": "ckpt-20",
        "step": 20,
        "warm_start": None,
        "problem": "translate_toy",
        "model": "transformer",
        "flags": {name: 1 for name in startup_handshake.LOOP_FLAGS},
        "hparams": {"hidden_size": 32, "learning_rate": 0.2},
        "shards": {"train": ["t-0", "t-1"], "dev": ["d-0"]},
        "output_dir": "/out",
        "data_dir": "/data",
        "data_seed": 7,
    }
    for key, value in changes.items():
        if key in base["flags"]:
            base["flags"][key] = value
        elif key in ("hidden_size", "learning_rate"):
            base["hparams"][key] = value
        else:
            base[key] = value
    return base


def test_the_first_difference_is_named_with_each_workers_value_and_the_fix():
    differ = lambda *workers: first_difference(list(workers))  # noqa: E731
    assert differ(facts(), facts(data_seed=99), facts()) is None  # the seed is the chief's
    stale = differ(facts(), facts(restored="ckpt-10", step=10), facts())
    assert stale.startswith(
        "the workers restored different checkpoints from the chief's --output_dir /out: ckpt-20 "
        "(step 20) on workers 0 (the chief), 2, ckpt-10 (step 10) on worker 1. Every worker"
    ), stale
    steps = differ(facts(train_steps=40), facts(train_steps=80, steps_per_loop=3))
    assert steps == (
        "the workers were started with different --train_steps: 40 on worker 0 (the chief), "
        "80 on worker 1. Start every worker with the same command (only TF_CONFIG differs), "
        "then restart the whole cluster (nothing was written)."
    )
    warm = {"source": "/a/ckpt-20", "weights": "0123456789ab"}
    assert differ(facts(warm_start=warm), facts(warm_start=dict(warm, source="/b/ckpt-20"))) is None
    other = differ(facts(warm_start=warm), facts(warm_start=dict(warm, weights="ba9876543210")))
    assert other.startswith(
        "the workers warm-started from different weights: /a/ckpt-20 (weights 0123456789ab) on "
        "worker 0 (the chief), /a/ckpt-20 (weights ba9876543210) on worker 1. Give every worker "
        "the same --warm_start_from"
    ), other
    stale = differ(facts(warm_start=warm), facts(warm_start=dict(warm, source="/a/ckpt-10")))
    assert "/a/ckpt-10 (weights 0123456789ab) on worker 1" in stale, stale
    assert "no warm start on worker 1" in differ(facts(warm_start=warm), facts())
    hp = differ(facts(), facts(learning_rate=0.1))
    assert hp.startswith(
        "the workers' hparams differ, first at learning_rate: 0.2 on worker 0 (the chief), 0.1 "
        "on worker 1 (hparams hash "
    ), hp
    assert len(set(re.findall(r"\b[0-9a-f]{8}\b", hp))) == 2, hp
    shards = differ(facts(), facts(shards={"train": ["t-0"], "dev": ["d-0"]}))
    assert shards.startswith(
        "the workers see different train shards in --data_dir (/data on the chief): 2 (has t-1) "
        "on worker 0 (the chief), 1 (lacks t-1) on worker 1."
    ), shards
    many = differ(*[facts()] * 6, facts(problem="other"))
    assert "translate_toy on workers 0 (the chief), 1, 2, 3 and 2 more, other on worker 6" in many


def test_one_host_keeps_its_seeds_and_workers_get_their_own():
    assert startup_handshake.agree(None, Cluster(), facts(random_seed=None)) is None
    assert worker_seed(None, 3) is None and worker_seed(5, 0) == 5
    assert len({worker_seed(5, i) for i in range(4)}) == 4


class FakeGather:
    """``BytesGather`` over two workers in one process: the other worker's facts are given;
    a peer error in the ``fail_after``-th call (a peer that exited)."""

    def __init__(self, strategy, workers, other=None, fail_after=None, calls=None):
        self.other, self.fail_after, self.calls = other, fail_after, calls

    def __call__(self, data: bytes) -> list[bytes]:
        self.calls.append(data)
        if len(self.calls) == self.fail_after:
            raise tf.errors.UnavailableError(None, None, "Socket closed")
        return [data, self.other if len(self.calls) == 1 else data]


@pytest.mark.parametrize("peer_exits_after_it", [False, True])
def test_a_mismatch_waits_until_every_worker_has_the_facts(monkeypatch, peer_exits_after_it):
    """A worker whose gather returned first must not exit while a peer still reads its part
    (that peer would say "worker 0 failed" instead of the mismatch): a second gather, which a
    peer reaches only with the facts in hand; a peer gone after it changes no message."""
    calls = []
    other = json.dumps(facts(train_steps=80), sort_keys=True).encode()
    fail_after = 2 if peer_exits_after_it else None
    monkeypatch.setattr(
        startup_handshake,
        "BytesGather",
        lambda s, w: FakeGather(s, w, other=other, fail_after=fail_after, calls=calls),
    )
    with pytest.raises(startup_handshake.ClusterMismatchError, match="different --train_steps"):
        startup_handshake.agree(None, Cluster(2, 0, "worker", 0), facts(train_steps=40))
    assert len(calls) == 2
    calls.clear()  # workers that agree gather once: nothing more on every start
    other = json.dumps(facts(), sort_keys=True).encode()
    assert startup_handshake.agree(None, Cluster(2, 0, "worker", 0), facts()) == 7
    assert len(calls) == 1


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"schedule": "continuous_eval"}, "run the evaluator as one more process without"),
        ({"generate_data": True}, "run t2t-datagen once"),
    ],
)
def test_what_a_cluster_cannot_do_is_refused(changes, message):
    cfg = SimpleNamespace(**{"generate_data": False, "schedule": "train", **changes})
    with pytest.raises(TrainingError, match=message):
        startup_handshake.refuse_on_a_cluster(cfg, Cluster(2, 1, "worker", 1))
    startup_handshake.refuse_on_a_cluster(cfg, Cluster())  # one host: allowed


def test_a_peers_failure_is_one_line_naming_it_and_what_to_do():
    text = (
        "Graph execution error:\n\nDetected at node while/CollectiveReduceV2 defined at:\n"
        '  File "x.py", line 1, in f\n\nCollective ops is aborted by: recvmsg:Connection '
        "reset by peer\nAdditional GRPC error information from remote target "
        "/job:worker/replica:0/task:0 while calling /tensorflow.WorkerService/CompleteInstance"
    )
    error = tf.errors.UnavailableError(None, None, text)
    lost = exit_codes.peer_failure(error, Cluster(2, 1, "worker", 1), 30.0, "/out/ckpt-40")
    assert str(lost) == (
        "this is worker 1; worker 0 failed or was stopped (its own log says why). Restart the "
        "whole cluster (every process, same command); it resumes from /out/ckpt-40. "
        "[TensorFlow: Collective ops is aborted by: recvmsg:Connection reset by peer]"
    )
    stuck = exit_codes.peer_failure(
        tf.errors.DeadlineExceededError(None, None, "Collective has timed out"),
        Cluster(2, 0, "chief", 0),
        30.0,
        None,
    )
    assert str(stuck).startswith(
        "this is chief 0; another worker did not answer for 30 s (--collective_timeout_secs)"
    )
    assert "it starts from step 0 (no checkpoint yet)" in str(stuck)


def test_exit_flags_are_checked():
    for bad in (
        {"signal_exit_code": 0},
        {"signal_exit_code": 256},
        {"collective_timeout_secs": -1},
    ):
        cfg = SimpleNamespace(**{"signal_exit_code": 143, "collective_timeout_secs": 1, **bad})
        with pytest.raises(TrainingError):
            exit_codes.check_exit_flags(cfg)


def test_worker_gpu_on_a_cluster_keeps_the_first_gpus(monkeypatch):
    from t2t_repro.errors import UserError
    from t2t_repro.training.cluster import distribution

    shown = []
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind: ["g0", "g1", "g2"])
    monkeypatch.setattr(tf.config, "set_visible_devices", lambda d, kind: shown.append((d, kind)))
    distribution._use_first_gpus(2)
    assert shown == [(["g0", "g1"], "GPU")]

    def too_late(devices, kind):
        raise RuntimeError("Visible devices cannot be modified after being initialized")

    monkeypatch.setattr(tf.config, "set_visible_devices", too_late)
    with pytest.raises(UserError, match="set CUDA_VISIBLE_DEVICES to the 2 GPU"):
        distribution._use_first_gpus(2)


def test_chief_only_work_cannot_issue_a_collective():
    """#56: in the thread running the chief's work, a collective (made eagerly, traced, or in
    an already traced function) is refused in one line; other threads go on."""
    import threading

    from tensorflow.python.ops import collective_ops

    from t2t_repro.training.cluster.chief_only import ChiefOnlyCollectiveError, chief_only

    @tf.function
    def reduce(x):  # one member: runs without peers
        return collective_ops.all_reduce_v2(x, group_size=1, group_key=1, instance_key=1)

    assert float(reduce(tf.constant(2.0))) == 2.0
    with chief_only("dev decodes"):
        with pytest.raises(ChiefOnlyCollectiveError) as refused:
            reduce(tf.constant(2.0))
        other = []
        thread = threading.Thread(target=lambda: other.append(float(reduce(tf.constant(3.0)))))
        thread.start()
        thread.join()
        with pytest.raises(ChiefOnlyCollectiveError, match=r"\(collective_ops.all_gather_v2\)"):
            collective_ops.all_gather_v2(tf.constant([1.0]), 1, 2, 2)
        assert float(tf.function(lambda x: x * 2)(tf.constant(1.0))) == 2.0
    with pytest.raises(ChiefOnlyCollectiveError, match=r"\(collective_ops.all_reduce_v2\)"):
        with chief_only("split decodes"):  # traced here: the refusal, not tracing's wrapper
            tf.function(lambda x: collective_ops.all_reduce_v2(x, 1, 3, 3))(tf.constant(1.0))
    assert other == [3.0] and float(reduce(tf.constant(4.0))) == 4.0
    line = str(refused.value)
    assert line.startswith("the chief's dev decodes issued a collective (CollectiveReduceV2 in "), (
        line
    )
    assert "the other workers, waiting for the chief, would never join" in line
    assert len(line.splitlines()) == 1


def test_every_workers_stuck_line_names_the_chiefs_resume_point():
    """#56: from what the worker knows, without reading a file; a non-chief in a save cannot
    know whether the chief finished it."""
    from t2t_repro.training.trainer import Trainer

    def point(is_chief, latest, saving=None, listed=True):
        ckpt = SimpleNamespace(manager=object() if listed else None, latest=latest)
        trainer = SimpleNamespace(
            ckpt=ckpt,
            cfg=SimpleNamespace(output_dir="/out"),
            cluster=SimpleNamespace(is_chief=is_chief),
            _saving=saving,
        )
        return Trainer._resume_point(trainer)

    for chief in (True, False):
        assert point(chief, None, listed=False) == (
            "it resumes from the newest complete checkpoint in /out"
        )
        assert point(chief, "/out/ckpt-20") == "it resumes from /out/ckpt-20"
        assert point(chief, None) == "it starts from step 0 (no checkpoint yet)"
    assert point(True, "/out/ckpt-20", saving=30) == "it resumes from /out/ckpt-20"
    assert point(False, "/out/ckpt-20", saving=30) == (
        "it resumes from /out/ckpt-30 if the chief finished writing it, else from /out/ckpt-20"
    )
    assert point(False, None, saving=10).endswith("else from step 0")
