"""The cluster's concerns of a training run: where it trains (TF_CONFIG, strategy, devices),
what its workers must agree on and do together (start-up handshake, per-loop agreement, the
chief's work, gathers), what ends a worker that cannot go on (watchdog, exit codes), and how
a resume lays out its updates on another number of workers."""
