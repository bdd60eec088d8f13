"""One local Ray instance per test process, shared by every test that runs jobs on Ray."""

from __future__ import annotations

from types import ModuleType


class LocalRay:
    """A local two-CPU Ray instance in this process; :meth:`ensure` starts it again after a test
    stopped it (a stop and a start cost seconds, so tests leave it running)."""

    def __init__(self, ray: ModuleType) -> None:
        self.ray = ray
        self.ensure()

    def ensure(self) -> None:
        """Start the instance unless Ray is up in this process."""
        if not self.ray.is_initialized():
            self.ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
