"""What the tiny T2T train dirs of ``relative_reference.py``, ``lm_reference.py`` and
``classifier_reference.py`` share: T2T's model trained in a TF1 graph with
``tf.compat.v1.train.AdamOptimizer`` under the scope ``training`` (so its slots are named as
T2T's trainer names them) and saved as ``model.ckpt-<steps>``, and a fetch evaluated with the
model's variables read back from that checkpoint. Runs under T2T 1.15.7's virtualenv only."""

import os


def adam_train_and_save(tf, np, hparams, loss, feeds, train_dir, steps, learning_rate):
    """``steps`` Adam updates of ``loss``, each fed ``feeds(rng)`` (``rng``: numpy's generator
    seeded 3), then the checkpoint; call it inside the graph that built ``loss``."""
    global_step = tf.compat.v1.train.get_or_create_global_step()
    with tf.compat.v1.variable_scope("training"):
        optimizer = tf.compat.v1.train.AdamOptimizer(
            learning_rate,
            hparams.optimizer_adam_beta1,
            hparams.optimizer_adam_beta2,
            hparams.optimizer_adam_epsilon,
        )
        train_op = optimizer.minimize(loss, global_step=global_step)
    rng = np.random.default_rng(3)
    with tf.compat.v1.Session() as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        for _ in range(steps):
            sess.run(train_op, feeds(rng))
        tf.compat.v1.train.Saver(save_relative_paths=True).save(
            sess,
            os.path.join(train_dir, "model.ckpt"),
            global_step=global_step,
            write_meta_graph=False,
        )


def restored_run(tf, train_dir, fetch, scope):
    """``fetch`` evaluated with the variables under ``scope`` (the model's: ``transformer/``,
    ``transformer_encoder/``) restored from ``train_dir``."""
    model_vars = [v for v in tf.compat.v1.global_variables() if v.name.startswith(scope)]
    with tf.compat.v1.Session() as sess:
        tf.compat.v1.train.Saver(model_vars).restore(sess, tf.train.latest_checkpoint(train_dir))
        return sess.run(fetch)
