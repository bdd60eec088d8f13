"""The GRPO example of docs/training.md runs as a user writes it: a fresh process, a fresh cache, CPU only.

The example loads problems whose references are not measured yet and a
tiny model made by ``python -m rewardkit.trainers.tiny``; ``grpo_rows``
measures the references itself and ``build_trainer`` trains in FP32 where
no CUDA device supports BF16.  :data:`EXAMPLE` is that block.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLE = '''\
from rewardkit.benchmarks.loaders import load_dataset
from rewardkit.trainers import datasets, grpo

problems = load_dataset("mini", limit=2)                 # or venus, mercury, apps, humaneval, a local path
rows = datasets.grpo_rows(problems, objective="time")   # measures the references here first (cached)
trainer = grpo.build_trainer(
    "out/tiny-model", rows, preset="quality_efficiency", objective="time", output_dir="out/grpo-smoke",
    # smoke-size; leave these out for the seed's settings (16 generations, batch 4 x 128)
    max_steps=2, num_generations=4, per_device_train_batch_size=4, gradient_accumulation_steps=1,
    max_completion_length=32)
trainer.train()                                          # logs rewards/<component>/mean for every component
'''


def test_readme_grpo_example_runs_on_cpu(tmp_path: Path) -> None:
    env = {**os.environ, "REWARDKIT_CACHE_DIR": str(tmp_path / "cache"), "CUDA_VISIBLE_DEVICES": "",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1"}  # one torch thread: two wait on each other on a busy two-core machine

    def python(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300, check=False)

    made = python("-m", "rewardkit.trainers.tiny", "out/tiny-model")
    assert made.returncode == 0, made.stderr
    start = time.monotonic()
    check = "\nprint('steps', trainer.state.global_step, 'bf16', trainer.args.bf16)\n"
    ran = python("-c", EXAMPLE + check)
    elapsed = time.monotonic() - start
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.splitlines()[-1] == "steps 2 bf16 False"
    assert list((tmp_path / "cache" / "references").rglob("*.json"))  # the references were measured here
    print(f"README GRPO example: {elapsed:.1f} s")
