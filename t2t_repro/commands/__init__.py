"""The command-line tools' code: ``<tool>.main(argv) -> exit status``; ``bin/`` holds shims."""
