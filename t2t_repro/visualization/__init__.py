"""Pictures of what a model does (attention heat maps)."""
