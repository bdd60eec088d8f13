"""Easy embedded problems: one idea each, a library or linear answer beats the naive one."""

from __future__ import annotations

import random

from .spec import Spec, StdioForm

NUMBERS_MAIN = '''
import sys

def _main():
    data = sys.stdin.read().split()
    n = int(data[0])
    print(count_pairs(list(map(int, data[1:1 + n])), int(data[1 + n])))

_main()
'''


def _pairs_case(rng: random.Random, index: int) -> tuple[list[int], int]:
    size = 5 + index * 150 if index >= 6 else rng.randint(0, 12)
    return [rng.randint(-50, 50) for _ in range(size)], rng.randint(-20, 20)


COUNT_PAIRS = Spec(
    slug="count-pairs",
    title="Count pairs with a given sum",
    difficulty="easy",
    tags=("array", "hash table"),
    statement=("Given a list of integers `nums` and an integer `target`, return how many index "
               "pairs i < j have nums[i] + nums[j] == target."),
    entry_point="count_pairs",
    starter_code="def count_pairs(nums: list[int], target: int) -> int:\n    ...\n",
    generate=_pairs_case,
    references={
        "hash map, one pass": (
            "def count_pairs(nums, target):\n"
            "    seen = {}\n    total = 0\n"
            "    for x in nums:\n"
            "        total += seen.get(target - x, 0)\n"
            "        seen[x] = seen.get(x, 0) + 1\n"
            "    return total\n"),
        "Counter": (
            "from collections import Counter\n\n"
            "def count_pairs(nums, target):\n"
            "    c = Counter(nums)\n"
            "    total = sum(c[x] * c[target - x] for x in c if x < target - x)\n"
            "    if target % 2 == 0:\n"
            "        total += c[target // 2] * (c[target // 2] - 1) // 2\n"
            "    return total\n"),
        "sort and two pointers": (
            "def count_pairs(nums, target):\n"
            "    a = sorted(nums)\n    i, j, total = 0, len(a) - 1, 0\n"
            "    while i < j:\n"
            "        s = a[i] + a[j]\n"
            "        if s < target:\n            i += 1\n"
            "        elif s > target:\n            j -= 1\n"
            "        elif a[i] == a[j]:\n"
            "            k = j - i + 1\n            total += k * (k - 1) // 2\n            break\n"
            "        else:\n"
            "            left = right = 1\n"
            "            while i + left < j and a[i + left] == a[i]:\n                left += 1\n"
            "            while j - right > i and a[j - right] == a[j]:\n                right += 1\n"
            "            total += left * right\n            i += left\n            j -= right\n"
            "    return total\n"),
        "naive double loop": (
            "def count_pairs(nums, target):\n"
            "    total = 0\n"
            "    for i in range(len(nums)):\n"
            "        for j in range(i + 1, len(nums)):\n"
            "            if nums[i] + nums[j] == target:\n                total += 1\n"
            "    return total\n"),
        "itertools.combinations": (
            "from itertools import combinations\n\n"
            "def count_pairs(nums, target):\n"
            "    return sum(1 for a, b in combinations(nums, 2) if a + b == target)\n"),
        "count with list.count": (
            "def count_pairs(nums, target):\n"
            "    total = 0\n"
            "    for i, x in enumerate(nums):\n"
            "        total += nums[i + 1:].count(target - x)\n"
            "    return total\n"),
    },
    stdio=StdioForm(render_input=lambda nums, target: f"{len(nums)}\n{' '.join(map(str, nums))}\n{target}\n",
                    main=NUMBERS_MAIN),
)

SPECS = [COUNT_PAIRS]
