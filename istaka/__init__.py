"""The ``istaka`` command: one entry point that gathers the subcommands of okey, vision and service."""
