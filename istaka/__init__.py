"""The ``istaka`` command: one entry point gathering the subcommands of okey, vision and service."""
