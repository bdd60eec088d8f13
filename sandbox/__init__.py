"""Code execution and metering, isolated.

>>> from rewardkit.sandbox import Sandbox, TestSuite, Limits, ExecutionResult, Status
"""

from .measurement import PROTOCOLS, MeasurementProtocol, protocol
from .modes.call import values_equal
from .modes.stdio import normalize_output
from .packages import DEFAULT_PACKAGES
from .runtime.accounting import MEASUREMENT_VERSION
from .runtime.languages import LANGUAGES
from .sandbox import NotAdmitted, Sandbox
from .suite import Case, SuiteError, TestSuite
from .types import ExecutionResult, Limits, Status

__all__ = [
    "DEFAULT_PACKAGES",
    "LANGUAGES",
    "MEASUREMENT_VERSION",
    "PROTOCOLS",
    "Case",
    "ExecutionResult",
    "Limits",
    "MeasurementProtocol",
    "NotAdmitted",
    "Sandbox",
    "Status",
    "SuiteError",
    "TestSuite",
    "normalize_output",
    "protocol",
    "values_equal",
]
