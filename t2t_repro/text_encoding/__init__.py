"""T2T's text encoding: tokenizer, subword encoder and its vocabulary builder, in-graph encoder."""
