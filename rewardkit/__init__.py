"""rewardkit: rewards for code-generating models.

Correctness and efficiency from a sandbox (:mod:`rewardkit.sandbox`), quality
from static analysis (:mod:`rewardkit.analyzers`), behind one interface.
"""

__version__ = "0.1.0"
