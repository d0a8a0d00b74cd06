"""The pieces the training loop runs: the update and its input, the schedules (when to
evaluate and decode), evaluation (teacher-forced, dev decodes, attention maps), early
stopping, summaries, and the errors that stop the loop."""
