"""The suite's processes run Grappler without three passes that change nothing in its graphs
(tests/tf_overheads.py, its eighth item): what their functions run with, and the graph
TensorFlow's optimizer makes of a toy model's training loop with and without them."""

import os

import tensorflow as tf

from tests.tf_overheads import (
    KEEP_GRAPPLER_PASSES_ENV,
    skip_idle_grappler_passes,
    without_idle_grappler_passes,
)


def _training_loop_meta_graph():
    """A toy model's two training steps in a loop (dropout, attention, layer norm, their
    gradients, the weights' updates), as Grappler gets them at the loop's first call."""
    from tensorflow.python.framework import meta_graph

    from tests.model_utils import build_model
    from tests.tools import TINY_MODEL

    model = build_model("transformer_tiny", TINY_MODEL)  # T2T's dropout, one layer

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
    def loop(inputs, targets):
        def step(i, _):
            with tf.GradientTape() as tape:
                logits = model({"inputs": inputs, "targets": targets}, training=True)
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(targets, logits)
                )
            weights = model.trainable_variables
            for weight, gradient in zip(weights, tape.gradient(loss, weights), strict=True):
                weight.assign_sub(0.01 * gradient)
            return i + 1, loss

        return tf.while_loop(lambda i, _: i < 2, step, (0, 0.0))[1]

    graph = loop.get_concrete_function().graph
    graph.add_to_collection("train_op", graph.outputs[0].op)  # what Grappler must keep
    return meta_graph.create_meta_graph_def(graph=graph)


def _optimized_nodes(meta_graph_def, skip_idle_passes: bool) -> list:
    """Grappler's graph of ``meta_graph_def`` with TensorFlow's default passes (or without the
    idle ones): every node's name, op, inputs, device and attributes (but for colocation
    hints), constants by value."""
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.grappler import tf_optimizer

    config = config_pb2.ConfigProto()
    if skip_idle_passes:
        without_idle_grappler_passes(config.graph_options.rewrite_options)
    graph = tf_optimizer.OptimizeGraph(config, meta_graph_def)
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    # Without the TFG pass's round trip, other nodes of the inlined loop carry a colocation
    # hint (``_class``: place beside another node), which one device makes moot.
    for node in nodes:
        node.attr.pop("_class", None)

    def attribute(node, key):
        value = node.attr[key]
        if node.op == "Const" and key == "value":  # the TFG pass writes the same values
            array = tf.make_ndarray(value.tensor)  # in another encoding
            values = array.tolist() if array.dtype == object else array.tobytes()  # strings
            return str(array.dtype), array.shape, values
        return value.SerializeToString(deterministic=True)

    return sorted(
        (n.name, n.op, list(n.input), n.device, [(k, attribute(n, k)) for k in sorted(n.attr)])
        for n in nodes
    )


def test_grappler_skips_its_idle_passes_and_makes_the_same_graph():
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.eager import context

    # What this process's functions run with (set before its context started, as the tool
    # server's and so its forked runs'), unless this run was asked to keep them.
    skipped = os.environ.get(KEEP_GRAPPLER_PASSES_ENV) != "1"
    config = config_pb2.ConfigProto.FromString(
        context.context().function_call_options.config_proto_serialized
    )
    rewrite = config.graph_options.rewrite_options
    assert rewrite.disable_tfg_optimizer == skipped
    assert (rewrite.layout_optimizer == rewrite.OFF) == skipped
    assert (rewrite.implementation_selector == rewrite.OFF) == skipped
    meta_graph_def = _training_loop_meta_graph()
    own = _optimized_nodes(meta_graph_def, skip_idle_passes=False)
    assert _optimized_nodes(meta_graph_def, skip_idle_passes=True) == own
    ops_made = [op for _, op, *_ in own]
    assert "Enter" in ops_made or "While" in ops_made  # the loop, optimized with its body
    assert ops_made.count("Const") > 50 and ops_made.count("MatMul") > 10


def test_asked_to_keep_grappler_passes_it_changes_nothing(monkeypatch):
    monkeypatch.setenv(KEEP_GRAPPLER_PASSES_ENV, "1")
    assert not skip_idle_grappler_passes()
