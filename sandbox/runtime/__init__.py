"""The part of the sandbox that runs beside the code under test.

Everything in this package uses the standard library only: it is executed by
the worker process on the host (local backend) and inside containers whose
image has nothing but ``python3`` (docker backend).  The parent process imports
the same modules for the wire protocol, so both ends always agree.
"""
