"""Where workers run: on this machine (``local``) or in containers (``docker``)."""
