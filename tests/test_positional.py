"""Positional signals: T2T's layout and frequencies versus the paper's."""

import math

import numpy as np
import tensorflow as tf

from t2t_repro.layers.positional import paper_signal, timing_signal


def test_t2t_timing_signal_is_concatenated_with_n_minus_1_denominator():
    d, p = 512, 7.0
    sig = timing_signal(tf.constant([p]), d).numpy()[0]
    n = d // 2
    for i in (0, 1, 100, n - 1):
        inv = 10000 ** (-i / (n - 1))
        assert sig[i] == np.float32(math.sin(p * inv)) or abs(sig[i] - math.sin(p * inv)) < 1e-5
        assert abs(sig[n + i] - math.cos(p * inv)) < 1e-5


def test_frequencies_t2t_vs_paper():
    # Second frequency: T2T 0.964526 vs the paper's 0.964662 (d=512); slowest 1e-4 exactly.
    d = 512
    t2t = timing_signal(tf.constant([1.0]), d).numpy()[0]
    assert abs(math.asin(t2t[1]) - 0.964526) < 1e-5
    paper = paper_signal(tf.constant([1.0]), d).numpy()[0]
    assert abs(math.asin(paper[2]) - 0.964662) < 1e-5  # Interleaved: index 2 = sin, i=1.
    assert abs(math.cos(1.0) - paper[1]) < 1e-6  # Index 1 = cos of the first frequency.


def test_an_odd_width_ends_with_a_zero_channel_and_an_even_one_builds_no_pad():
    """T2T pads an odd width with one zero channel (``get_timing_signal_1d``); an even width
    has nothing to pad, and its graph no pad op (one fewer to trace and run)."""
    positions = tf.range(5.0)
    odd, even = timing_signal(positions, 7).numpy(), timing_signal(positions, 6).numpy()
    np.testing.assert_array_equal(odd[:, :6], even)  # three timescales each: the same bits
    assert not odd[:, 6].any()
    spec = tf.TensorSpec([None], tf.float32)
    graph = tf.function(lambda p: timing_signal(p, 6)).get_concrete_function(spec).graph
    assert "Pad" not in {op.type for op in graph.get_operations()}
