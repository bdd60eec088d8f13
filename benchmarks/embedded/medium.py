"""Medium embedded problems: a known technique (sweep, monotonic stack, DP, graph search) beats the naive one.

Each spec's first reference is the plain standard solution (it writes the
expected outputs); the others include at least one slower complexity class,
and the last generated cases are large enough to tell the classes apart.
"""

from __future__ import annotations

import random
import string
from typing import Any

from .spec import Spec, StdioForm, numbers_form, source, stdin_main

# -- longest increasing subsequence ----------------------------------------------------------------

def _lis_case(rng: random.Random, index: int) -> tuple[list[int]]:
    if index == 0:
        return ([],)
    if index == 1:
        return ([rng.randint(-100, 100)],)
    if index == 2:
        return ([rng.randint(-5, 5)] * rng.randint(2, 8),)
    if index == 3:
        return (sorted(rng.sample(range(-50, 50), 10), reverse=True),)
    if index < 6:
        return ([rng.randint(-20, 20) for _ in range(15)],)
    size = (0, 0, 0, 0, 0, 0, 90, 190, 350, 540)[index]
    return ([rng.randint(-10**6, 10**6) for _ in range(size)],)


LIS_LENGTH = Spec(
    slug="longest-increasing-subsequence",
    title="Longest increasing subsequence length",
    difficulty="medium",
    tags=("array", "dynamic programming", "binary search"),
    statement=("Given a list of integers `nums` (0 <= len(nums) <= 1000, values between -10**6 and 10**6), "
               "return the length of its longest strictly increasing subsequence: the most elements "
               "you can pick, keeping their order, so that each picked value is greater than the one "
               "before it. An empty list has length 0."),
    signature="lis_length(nums: list[int]) -> int",
    generate=_lis_case,
    references={
        "patience sorting with bisect": source("""
            from bisect import bisect_left

            def lis_length(nums):
                tails = []
                for x in nums:
                    i = bisect_left(tails, x)
                    if i == len(tails):
                        tails.append(x)
                    else:
                        tails[i] = x
                return len(tails)
            """),
        "tails with hand-written binary search": source("""
            def lis_length(nums):
                tails = []
                for x in nums:
                    lo, hi = 0, len(tails)
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if tails[mid] < x:
                            lo = mid + 1
                        else:
                            hi = mid
                    if lo == len(tails):
                        tails.append(x)
                    else:
                        tails[lo] = x
                return len(tails)
            """),
        "Fenwick tree of prefix maxima": source("""
            def lis_length(nums):
                rank = {v: i + 1 for i, v in enumerate(sorted(set(nums)))}
                tree = [0] * (len(rank) + 1)
                best = 0
                for x in nums:
                    i, length = rank[x] - 1, 0
                    while i > 0:
                        length = max(length, tree[i])
                        i -= i & -i
                    length += 1
                    best = max(best, length)
                    i = rank[x]
                    while i < len(tree):
                        tree[i] = max(tree[i], length)
                        i += i & -i
                return best
            """),
        "DP O(n^2) with max()": source("""
            def lis_length(nums):
                best = []
                for i, x in enumerate(nums):
                    best.append(1 + max((best[j] for j in range(i) if nums[j] < x), default=0))
                return max(best, default=0)
            """),
        "DP O(n^2) double loop": source("""
            def lis_length(nums):
                dp = [1] * len(nums)
                for i in range(len(nums)):
                    for j in range(i):
                        if nums[j] < nums[i] and dp[j] + 1 > dp[i]:
                            dp[i] = dp[j] + 1
                return max(dp) if dp else 0
            """),
        "LCS with the sorted distinct values": source("""
            def lis_length(nums):
                values = sorted(set(nums))
                prev = [0] * (len(values) + 1)
                for x in nums:
                    row = [0]
                    for j, v in enumerate(values):
                        row.append(prev[j] + 1 if x == v else max(prev[j + 1], row[j]))
                    prev = row
                return prev[-1]
            """),
    },
    stdio=numbers_form("lis_length(nums)"),
)


# -- merge intervals -------------------------------------------------------------------------------

def _intervals_case(rng: random.Random, index: int) -> tuple[list[list[int]]]:
    fixed: tuple[Any, ...] = ([], [[4, 4]], [[1, 4], [1, 4], [2, 3], [1, 4]],
                              [[1, 2], [2, 3], [5, 6], [6, 6], [8, 9]],
                              [[-5, -1], [-3, 2], [4, 7], [-10, -8], [3, 3]])
    if index < len(fixed):
        intervals = [list(pair) for pair in fixed[index]]
        rng.shuffle(intervals)
        return (intervals,)
    size = 8 if index < 6 else (0, 0, 0, 0, 0, 0, 300, 600, 900, 1200)[index]
    span = 3 * size
    starts = [rng.randint(-span, span) for _ in range(size)]
    return ([[s, s + rng.choice((0, 1, 2, 3, 5, 9))] for s in starts],)


MERGE_INTERVALS = Spec(
    slug="merge-intervals",
    title="Merge overlapping intervals",
    difficulty="medium",
    tags=("array", "sorting", "intervals"),
    statement=("Given a list of closed intervals `[start, end]` of integers (start <= end, values between "
               "-10**4 and 10**4, at most 1500 intervals, in any order, possibly repeated), merge every "
               "group of intervals that overlap or touch (share an endpoint: [1, 2] and [2, 5] become "
               "[1, 5], while [1, 2] and [3, 4] stay apart). Return the merged intervals as "
               "`[start, end]` lists sorted by start."),
    signature="merge_intervals(intervals: list[list[int]]) -> list[list[int]]",
    generate=_intervals_case,
    references={
        "sort and sweep": source("""
            def merge_intervals(intervals):
                merged = []
                for start, end in sorted(intervals):
                    if merged and start <= merged[-1][1]:
                        merged[-1][1] = max(merged[-1][1], end)
                    else:
                        merged.append([start, end])
                return merged
            """),
        "sorted endpoint events": source("""
            def merge_intervals(intervals):
                events = sorted([(s, 0) for s, _ in intervals] + [(e, 1) for _, e in intervals])
                merged, depth, start = [], 0, None
                for x, kind in events:
                    if kind == 0:
                        if depth == 0:
                            start = x
                        depth += 1
                    else:
                        depth -= 1
                        if depth == 0:
                            merged.append([start, x])
                return merged
            """),
        "heapq sweep": source("""
            import heapq

            def merge_intervals(intervals):
                heap = [tuple(pair) for pair in intervals]
                heapq.heapify(heap)
                merged = []
                while heap:
                    start, end = heapq.heappop(heap)
                    if merged and start <= merged[-1][1]:
                        merged[-1][1] = max(merged[-1][1], end)
                    else:
                        merged.append([start, end])
                return merged
            """),
        "bisect into a sorted disjoint list": source("""
            from bisect import bisect_left, bisect_right

            def merge_intervals(intervals):
                starts, ends = [], []
                for start, end in intervals:
                    i = bisect_left(ends, start)
                    j = bisect_right(starts, end)
                    if i < j:
                        start, end = min(start, starts[i]), max(end, ends[j - 1])
                    starts[i:j] = [start]
                    ends[i:j] = [end]
                return [[s, e] for s, e in zip(starts, ends)]
            """),
        "absorb into the merged list, O(n^2)": source("""
            def merge_intervals(intervals):
                merged = []
                for start, end in intervals:
                    kept = []
                    for s, e in merged:
                        if s <= end and start <= e:
                            start, end = min(start, s), max(end, e)
                        else:
                            kept.append([s, e])
                    kept.append([start, end])
                    merged = kept
                return sorted(merged)
            """),
        "union-find over all pairs, O(n^2)": source("""
            def merge_intervals(intervals):
                parent = list(range(len(intervals)))

                def find(x):
                    while parent[x] != x:
                        parent[x] = parent[parent[x]]
                        x = parent[x]
                    return x

                for i, (s1, e1) in enumerate(intervals):
                    for j in range(i + 1, len(intervals)):
                        s2, e2 = intervals[j]
                        if s1 <= e2 and s2 <= e1:
                            parent[find(i)] = find(j)
                groups = {}
                for i, (s, e) in enumerate(intervals):
                    root = find(i)
                    lo, hi = groups.get(root, (s, e))
                    groups[root] = (min(lo, s), max(hi, e))
                return sorted([lo, hi] for lo, hi in groups.values())
            """),
    },
)


# -- number of islands -----------------------------------------------------------------------------

def _islands_case(rng: random.Random, index: int) -> tuple[list[str]]:
    if index == 0:
        return ([],)
    if index in (1, 2):
        return ([str(2 - index)],)
    rows, cols = ((1, 12), (9, 1), (5, 6), (20, 20), (35, 35), (50, 50), (62, 62))[index - 3]
    return (["".join("1" if rng.random() < 0.6 else "0" for _ in range(cols)) for _ in range(rows)],)


COUNT_ISLANDS = Spec(
    slug="count-islands",
    title="Number of islands",
    difficulty="medium",
    tags=("grid", "graph", "breadth-first search", "union-find"),
    statement=("A map is given as a list of equal-length strings of '0' (water) and '1' (land); it has "
               "at most 100 rows and 100 columns, and may be empty (no rows), but no row is empty. "
               "Land cells that share a side (up, down, left, right; not diagonals) belong to the "
               "same island. Return the number of islands."),
    signature="count_islands(grid: list[str]) -> int",
    generate=_islands_case,
    references={
        "breadth-first search with deque": source("""
            from collections import deque

            def count_islands(grid):
                rows, cols = len(grid), len(grid[0]) if grid else 0
                seen = [[False] * cols for _ in range(rows)]
                count = 0
                for r in range(rows):
                    for c in range(cols):
                        if grid[r][c] != "1" or seen[r][c]:
                            continue
                        count += 1
                        seen[r][c] = True
                        queue = deque([(r, c)])
                        while queue:
                            y, x = queue.popleft()
                            for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
                                if 0 <= ny < rows and 0 <= nx < cols and not seen[ny][nx]:
                                    if grid[ny][nx] == "1":
                                        seen[ny][nx] = True
                                        queue.append((ny, nx))
                return count
            """),
        "depth-first search on a set of land cells": source("""
            def count_islands(grid):
                land = {(r, c) for r, row in enumerate(grid) for c, ch in enumerate(row) if ch == "1"}
                count = 0
                while land:
                    stack = [land.pop()]
                    count += 1
                    while stack:
                        r, c = stack.pop()
                        for cell in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                            if cell in land:
                                land.remove(cell)
                                stack.append(cell)
                return count
            """),
        "union-find over cells": source("""
            def count_islands(grid):
                cols = len(grid[0]) if grid else 0
                parent = {}

                def find(x):
                    while parent[x] != x:
                        parent[x] = parent[parent[x]]
                        x = parent[x]
                    return x

                count = 0
                for r, row in enumerate(grid):
                    for c, ch in enumerate(row):
                        if ch != "1":
                            continue
                        cell = r * cols + c
                        parent[cell] = cell
                        count += 1
                        for other in (cell - cols if r else -1, cell - 1 if c else -1):
                            if other in parent:
                                a, b = find(cell), find(other)
                                if a != b:
                                    parent[a] = b
                                    count -= 1
                return count
            """),
        "union-find over runs of land (re)": source("""
            import re

            def count_islands(grid):
                parent = []

                def find(x):
                    while parent[x] != x:
                        parent[x] = parent[parent[x]]
                        x = parent[x]
                    return x

                count, previous = 0, []
                for row in grid:
                    runs = []
                    for match in re.finditer("1+", row):
                        runs.append((match.start(), match.end() - 1, len(parent)))
                        parent.append(len(parent))
                        count += 1
                    i = j = 0
                    while i < len(previous) and j < len(runs):
                        (s1, e1, a), (s2, e2, b) = previous[i], runs[j]
                        if s1 <= e2 and s2 <= e1:
                            a, b = find(a), find(b)
                            if a != b:
                                parent[a] = b
                                count -= 1
                        if e1 < e2:
                            i += 1
                        else:
                            j += 1
                    previous = runs
                return count
            """),
        "iterative depth-first search with a visited grid": source("""
            def count_islands(grid):
                rows, cols = len(grid), len(grid[0]) if grid else 0
                visited = [[ch == "0" for ch in row] for row in grid]
                count = 0
                for r in range(rows):
                    for c in range(cols):
                        if visited[r][c]:
                            continue
                        count += 1
                        visited[r][c] = True
                        stack = [(r, c)]
                        while stack:
                            y, x = stack.pop()
                            if y > 0 and not visited[y - 1][x]:
                                visited[y - 1][x] = True
                                stack.append((y - 1, x))
                            if y + 1 < rows and not visited[y + 1][x]:
                                visited[y + 1][x] = True
                                stack.append((y + 1, x))
                            if x > 0 and not visited[y][x - 1]:
                                visited[y][x - 1] = True
                                stack.append((y, x - 1))
                            if x + 1 < cols and not visited[y][x + 1]:
                                visited[y][x + 1] = True
                                stack.append((y, x + 1))
                return count
            """),
        "label propagation until stable": source("""
            def count_islands(grid):
                label = {(r, c): (r, c) for r, row in enumerate(grid)
                         for c, ch in enumerate(row) if ch == "1"}
                changed = True
                while changed:
                    changed = False
                    for (r, c), value in label.items():
                        best = value
                        for cell in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                            other = label.get(cell)
                            if other is not None and other < best:
                                best = other
                        if best < value:
                            label[r, c] = best
                            changed = True
                return len(set(label.values()))
            """),
    },
    stdio=StdioForm(render_input=lambda grid: "".join(f"{line}\n" for line in [str(len(grid)), *grid]),
                    main=stdin_main("""
        data = sys.stdin.read().split()
        print(count_islands(data[1:1 + int(data[0])]))
        """)),
)


# -- coin change: number of ways -------------------------------------------------------------------

def _coins_case(rng: random.Random, index: int) -> tuple[list[int], int]:
    fixed: tuple[Any, ...] = (([], 0), ([], 5), ([2], 3), ([1], 0), ([5, 1, 2], 11), ([3, 7, 11], 50))
    if index < len(fixed):
        coins, amount = fixed[index]
        return list(coins), amount
    amount = (0, 0, 0, 0, 0, 0, 400, 700, 1000, 1400)[index]
    coins = rng.sample(range(2, 40), rng.randint(5, 8))
    return coins, amount


COIN_CHANGE_WAYS = Spec(
    slug="coin-change-ways",
    title="Ways to make change",
    difficulty="medium",
    tags=("dynamic programming", "combinatorics"),
    statement=("Given a list of distinct positive coin values `coins` (at most 20 values, each at most "
               "1000; possibly empty) and an `amount` (0 <= amount <= 2000), with an unlimited supply "
               "of every coin, return the number of different ways to pay exactly `amount`, modulo "
               "1_000_000_007. Ways that use the same coins in a different order are the same way; "
               "paying 0 has exactly one way (no coins)."),
    signature="count_ways(coins: list[int], amount: int) -> int",
    generate=_coins_case,
    references={
        "one-dimensional DP": source("""
            def count_ways(coins, amount):
                mod = 1_000_000_007
                ways = [1] + [0] * amount
                for coin in coins:
                    for a in range(coin, amount + 1):
                        ways[a] = (ways[a] + ways[a - coin]) % mod
                return ways[amount]
            """),
        "two-dimensional table by coin": source("""
            def count_ways(coins, amount):
                mod = 1_000_000_007
                table = [[1] + [0] * amount]
                for coin in coins:
                    above, row = table[-1], [0] * (amount + 1)
                    for a in range(amount + 1):
                        row[a] = (above[a] + (row[a - coin] if a >= coin else 0)) % mod
                    table.append(row)
                return table[-1][amount]
            """),
        "table by amount, then coin": source("""
            def count_ways(coins, amount):
                mod = 1_000_000_007
                # ways[a][i]: ways to pay a with the first i coins
                ways = [[1] * (len(coins) + 1)]
                for a in range(1, amount + 1):
                    row = [0]
                    for i, coin in enumerate(coins):
                        row.append((row[i] + (ways[a - coin][i + 1] if a >= coin else 0)) % mod)
                    ways.append(row)
                return ways[amount][len(coins)]
            """),
        "running sums per residue class": source("""
            def count_ways(coins, amount):
                mod = 1_000_000_007
                ways = [1] + [0] * amount
                for coin in coins:
                    new = [0] * (amount + 1)
                    for residue in range(min(coin, amount + 1)):
                        total = 0
                        for a in range(residue, amount + 1, coin):
                            total = (total + ways[a]) % mod
                            new[a] = total
                    ways = new
                return ways[amount]
            """),
        "sum over how many of each coin": source("""
            def count_ways(coins, amount):
                mod = 1_000_000_007
                ways = [1] + [0] * amount
                for coin in coins:
                    ways = [sum(ways[a - k * coin] for k in range(a // coin + 1)) % mod
                            for a in range(amount + 1)]
                return ways[amount]
            """),
        "memoised recursion over coins": source("""
            from functools import lru_cache

            def count_ways(coins, amount):
                @lru_cache(maxsize=None)
                def ways(i, rest):
                    if i == len(coins):
                        return 1 if rest == 0 else 0
                    total = 0
                    for used in range(0, rest + 1, coins[i]):
                        total += ways(i + 1, rest - used)
                    return total % 1_000_000_007

                return ways(0, amount)
            """),
    },
)


# -- longest substring without repeated characters -------------------------------------------------

_PRINTABLE = "".join(chr(code) for code in range(33, 127))


def _unique_case(rng: random.Random, index: int) -> tuple[str]:
    if index < 3:
        return (("", "q", "zzzz")[index],)
    if index == 3:
        return ("".join(rng.choice("abc") for _ in range(12)),)
    if index == 4:
        letters = list(string.ascii_letters)
        rng.shuffle(letters)
        return ("".join(letters[:20]) + letters[0],)
    size = 30 if index == 5 else (0, 0, 0, 0, 0, 0, 800, 2000, 4000, 6500)[index]
    return ("".join(rng.choice(_PRINTABLE) for _ in range(size)),)


LONGEST_UNIQUE_SUBSTRING = Spec(
    slug="longest-unique-substring",
    title="Longest substring without repeated characters",
    difficulty="medium",
    tags=("string", "sliding window", "hash table"),
    statement=("Given a string `s` of printable ASCII characters other than space (codes 33 to 126; "
               "0 <= len(s) <= 10**4), return the length of its longest substring (a contiguous "
               "piece) in which no character appears twice."),
    signature="longest_unique(s: str) -> int",
    generate=_unique_case,
    references={
        "sliding window with last positions": source("""
            def longest_unique(s):
                last, start, best = {}, 0, 0
                for i, ch in enumerate(s):
                    if last.get(ch, -1) >= start:
                        start = last[ch] + 1
                    last[ch] = i
                    best = max(best, i - start + 1)
                return best
            """),
        "sliding window with a set": source("""
            def longest_unique(s):
                window, left, best = set(), 0, 0
                for ch in s:
                    while ch in window:
                        window.remove(s[left])
                        left += 1
                    window.add(ch)
                    best = max(best, len(window))
                return best
            """),
        "last positions in a list by code": source("""
            def longest_unique(s):
                last = [-1] * 128
                start = best = 0
                for i, ch in enumerate(s):
                    code = ord(ch)
                    if last[code] >= start:
                        start = last[code] + 1
                    last[code] = i
                    if i - start + 1 > best:
                        best = i - start + 1
                return best
            """),
        "binary search on the length with a Counter window": source("""
            from collections import Counter

            def longest_unique(s):
                def fits(length):
                    window = Counter(s[:length])
                    if len(window) == length:
                        return True
                    for i in range(length, len(s)):
                        window[s[i]] += 1
                        window[s[i - length]] -= 1
                        if window[s[i - length]] == 0:
                            del window[s[i - length]]
                        if len(window) == length:
                            return True
                    return False

                lo, hi = 0, min(len(s), 94)
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if fits(mid):
                        lo = mid
                    else:
                        hi = mid - 1
                return lo
            """),
        "extend from every start": source("""
            def longest_unique(s):
                best = 0
                for i in range(len(s)):
                    seen = set()
                    for ch in s[i:]:
                        if ch in seen:
                            break
                        seen.add(ch)
                    best = max(best, len(seen))
                return best
            """),
        "check every substring": source("""
            def longest_unique(s):
                best = 0
                for i in range(len(s)):
                    for j in range(i + 1, len(s) + 1):
                        if len(set(s[i:j])) < j - i:
                            break
                        best = max(best, j - i)
                return best
            """),
    },
    stdio=StdioForm(render_input=lambda s: f"{s}\n", main=stdin_main("""
        print(longest_unique(sys.stdin.readline().rstrip("\\n")))
        """)),
)


# -- kth smallest in a sorted matrix ---------------------------------------------------------------

def _sorted_matrix(rng: random.Random, size: int, step: int) -> list[list[int]]:
    """A size x size matrix whose rows and columns do not decrease, with repeated values."""
    matrix = [[0] * size for _ in range(size)]
    for r in range(size):
        for c in range(size):
            floor = max(matrix[r - 1][c] if r else -60, matrix[r][c - 1] if c else -60)
            matrix[r][c] = floor + rng.randint(0, step)
    return matrix


def _kth_case(rng: random.Random, index: int) -> tuple[list[list[int]], int]:
    size = (1, 2, 3, 3, 5, 8, 35, 55, 75, 90)[index]
    matrix = _sorted_matrix(rng, size, 0 if index == 1 else 3)
    k = (1, 3, 9, 1)[index] if index < 4 else rng.randint(size * size // 4, size * size)
    return matrix, k


KTH_SMALLEST_MATRIX = Spec(
    slug="kth-smallest-sorted-matrix",
    title="Kth smallest value in a sorted matrix",
    difficulty="medium",
    tags=("matrix", "heap", "binary search"),
    statement=("Given an n x n matrix of integers (1 <= n <= 150, values between -10**6 and 10**6) in "
               "which every row and every column is sorted in non-decreasing order, and an integer k "
               "with 1 <= k <= n*n, return the k-th smallest value of the matrix, counting repeated "
               "values separately (k = 1 is the smallest)."),
    signature="kth_smallest(matrix: list[list[int]], k: int) -> int",
    generate=_kth_case,
    references={
        "flatten and sort": source("""
            def kth_smallest(matrix, k):
                return sorted(v for row in matrix for v in row)[k - 1]
            """),
        "heapq.merge of the rows": source("""
            import heapq
            from itertools import islice

            def kth_smallest(matrix, k):
                return next(islice(heapq.merge(*matrix), k - 1, None))
            """),
        "heap of row heads": source("""
            import heapq

            def kth_smallest(matrix, k):
                heap = [(row[0], r, 0) for r, row in enumerate(matrix)]
                heapq.heapify(heap)
                for _ in range(k - 1):
                    _, r, c = heapq.heappop(heap)
                    if c + 1 < len(matrix[r]):
                        heapq.heappush(heap, (matrix[r][c + 1], r, c + 1))
                return heap[0][0]
            """),
        "binary search on the value, staircase count": source("""
            def kth_smallest(matrix, k):
                n = len(matrix)

                def at_most(x):
                    count, r, c = 0, n - 1, 0
                    while r >= 0 and c < n:
                        if matrix[r][c] <= x:
                            count += r + 1
                            c += 1
                        else:
                            r -= 1
                    return count

                lo, hi = matrix[0][0], matrix[-1][-1]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if at_most(mid) >= k:
                        hi = mid
                    else:
                        lo = mid + 1
                return lo
            """),
        "binary search on the value, bisect each row": source("""
            from bisect import bisect_right

            def kth_smallest(matrix, k):
                lo, hi = matrix[0][0], matrix[-1][-1]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if sum(bisect_right(row, mid) for row in matrix) >= k:
                        hi = mid
                    else:
                        lo = mid + 1
                return lo
            """),
        "scan the row heads k times": source("""
            def kth_smallest(matrix, k):
                heads = [0] * len(matrix)
                for _ in range(k):
                    value, best = min((row[heads[r]], r) for r, row in enumerate(matrix)
                                      if heads[r] < len(row))
                    heads[best] += 1
                return value
            """),
    },
)


# -- topological order (any valid answer) ----------------------------------------------------------

TOPO_VERIFY = source("""
    def verify(args, answer):
        n, edges = args
        if not isinstance(answer, list) or any(type(v) is not int for v in answer):
            return False
        if not answer:  # right only when there are no tasks or no order exists
            indegree, after = [0] * n, [[] for _ in range(n)]
            for a, b in edges:
                after[a].append(b)
                indegree[b] += 1
            ready = [v for v in range(n) if indegree[v] == 0]
            placed = 0
            while ready:
                v = ready.pop()
                placed += 1
                for w in after[v]:
                    indegree[w] -= 1
                    if indegree[w] == 0:
                        ready.append(w)
            return placed < n or n == 0
        if sorted(answer) != list(range(n)):
            return False
        position = {v: i for i, v in enumerate(answer)}
        return all(position[a] < position[b] for a, b in edges)
    """)


def _topo_case(rng: random.Random, index: int) -> tuple[int, list[list[int]]]:
    fixed: tuple[Any, ...] = ((0, []), (1, []), (3, [[0, 1], [1, 2], [2, 0]]), (2, [[1, 1]]),
             (4, [[0, 1], [2, 3], [0, 1], [1, 3]]))
    if index < len(fixed):
        n, edges = fixed[index]
        return n, [list(edge) for edge in edges]
    n = 8 if index == 5 else (0, 0, 0, 0, 0, 0, 500, 700, 850, 1000)[index]
    order = list(range(n))
    rng.shuffle(order)
    # mostly short hops along a hidden order, so the graph is deep; one large case gets a back edge
    edges = []
    first_hop: dict[int, int] = {}
    for i in range(n - 1):
        for _ in range(rng.randint(1, 3)):
            j = min(n - 1, i + rng.choice((1, 1, 2, 3, rng.randint(1, n))))
            first_hop.setdefault(i, j)
            edges.append([order[i], order[j]])
    if index == 7:  # close a cycle: follow first hops from a third of the way, then jump back
        end = n // 3
        while end in first_hop and end < 2 * n // 3:
            end = first_hop[end]
        edges.append([order[end], order[n // 3]])
    rng.shuffle(edges)
    return n, edges


TOPOLOGICAL_ORDER = Spec(
    slug="topological-order",
    title="Order tasks with prerequisites",
    difficulty="medium",
    tags=("graph", "topological sort"),
    statement=("There are `n` tasks numbered 0 to n-1 (0 <= n <= 1000) and a list `edges` of pairs "
               "[a, b] (at most 5000, possibly repeated, a may equal b) meaning task a must come "
               "before task b. Return a list containing every task exactly once in an order that "
               "respects all the pairs; any such order is accepted. If no such order exists (the "
               "requirements form a cycle), return an empty list."),
    signature="topological_order(n: int, edges: list[list[int]]) -> list[int]",
    generate=_topo_case,
    references={
        "Kahn's algorithm with a deque": source("""
            from collections import deque

            def topological_order(n, edges):
                indegree, after = [0] * n, [[] for _ in range(n)]
                for a, b in edges:
                    after[a].append(b)
                    indegree[b] += 1
                queue = deque(v for v in range(n) if indegree[v] == 0)
                order = []
                while queue:
                    v = queue.popleft()
                    order.append(v)
                    for w in after[v]:
                        indegree[w] -= 1
                        if indegree[w] == 0:
                            queue.append(w)
                return order if len(order) == n else []
            """),
        "Kahn's algorithm with a heap (smallest ready task first)": source("""
            import heapq

            def topological_order(n, edges):
                indegree, after = [0] * n, [[] for _ in range(n)]
                for a, b in edges:
                    after[a].append(b)
                    indegree[b] += 1
                heap = [v for v in range(n) if indegree[v] == 0]
                heapq.heapify(heap)
                order = []
                while heap:
                    v = heapq.heappop(heap)
                    order.append(v)
                    for w in after[v]:
                        indegree[w] -= 1
                        if indegree[w] == 0:
                            heapq.heappush(heap, w)
                return order if len(order) == n else []
            """),
        "graphlib.TopologicalSorter": source("""
            from graphlib import CycleError, TopologicalSorter

            def topological_order(n, edges):
                sorter = TopologicalSorter()
                for v in range(n):
                    sorter.add(v)
                for a, b in edges:
                    sorter.add(b, a)
                try:
                    return list(sorter.static_order())
                except CycleError:
                    return []
            """),
        "iterative depth-first search, reversed finish order": source("""
            def topological_order(n, edges):
                after = [[] for _ in range(n)]
                for a, b in edges:
                    after[a].append(b)
                state = [0] * n  # 0 new, 1 on the path, 2 finished
                finished = []
                for root in range(n):
                    if state[root]:
                        continue
                    state[root] = 1
                    stack = [(root, iter(after[root]))]
                    while stack:
                        v, children = stack[-1]
                        for w in children:
                            if state[w] == 1:
                                return []
                            if state[w] == 0:
                                state[w] = 1
                                stack.append((w, iter(after[w])))
                                break
                        else:
                            state[v] = 2
                            finished.append(v)
                            stack.pop()
                return finished[::-1]
            """),
        "scan for a ready task each step, O(n^2)": source("""
            def topological_order(n, edges):
                indegree, after = [0] * n, [[] for _ in range(n)]
                for a, b in edges:
                    after[a].append(b)
                    indegree[b] += 1
                placed, order = [False] * n, []
                for _ in range(n):
                    ready = next((v for v in range(n) if not placed[v] and indegree[v] == 0), None)
                    if ready is None:
                        return []
                    placed[ready] = True
                    order.append(ready)
                    for w in after[ready]:
                        indegree[w] -= 1
                return order
            """),
        "peel layers, recounting every round": source("""
            def topological_order(n, edges):
                remaining, order = set(range(n)), []
                while remaining:
                    blocked = {b for a, b in edges if a in remaining}
                    layer = sorted(remaining - blocked)
                    if not layer:
                        return []
                    order.extend(layer)
                    remaining.difference_update(layer)
                return order
            """),
    },
    stdio=StdioForm(
        render_input=lambda n, edges: f"{n} {len(edges)}\n" + "".join(f"{a} {b}\n" for a, b in edges),
        main=stdin_main("""
            data = list(map(int, sys.stdin.read().split()))
            n, m = data[0], data[1]
            edges = [[data[2 + 2 * i], data[3 + 2 * i]] for i in range(m)]
            print(json.dumps(topological_order(n, edges)))
            """, imports="import json\nimport sys")),
    verify=TOPO_VERIFY,
)


# -- days until a warmer day -----------------------------------------------------------------------

def _warmer_case(rng: random.Random, index: int) -> tuple[list[int]]:
    if index < 3:
        return (([], [71], [55, 55, 55, 55])[index],)
    if index == 3:
        return (sorted(rng.sample(range(30, 101), 8)),)
    if index == 4:
        return (sorted(rng.sample(range(30, 101), 8), reverse=True),)
    if index == 5:
        return ([rng.randint(30, 100) for _ in range(15)],)
    size = (0, 0, 0, 0, 0, 0, 1000, 2000, 3000, 4000)[index]
    # a cooling trend with noise: many days wait long for a warmer one
    return ([min(100, max(30, 100 - 70 * i // size + rng.randint(-4, 4))) for i in range(size)],)


DAYS_UNTIL_WARMER = Spec(
    slug="days-until-warmer",
    title="Days until a warmer day",
    difficulty="medium",
    tags=("array", "monotonic stack"),
    statement=("Given a list of daily temperatures `temps` (0 <= len(temps) <= 5000, each an integer "
               "from 30 to 100), return a list of the same length whose i-th value is how many days "
               "after day i the next strictly warmer day comes, or 0 if no later day is warmer."),
    signature="days_until_warmer(temps: list[int]) -> list[int]",
    generate=_warmer_case,
    references={
        "monotonic stack": source("""
            def days_until_warmer(temps):
                answer, stack = [0] * len(temps), []
                for i, t in enumerate(temps):
                    while stack and temps[stack[-1]] < t:
                        j = stack.pop()
                        answer[j] = i - j
                    stack.append(i)
                return answer
            """),
        "backward scan, jumping by known answers": source("""
            def days_until_warmer(temps):
                n = len(temps)
                answer = [0] * n
                for i in range(n - 2, -1, -1):
                    j = i + 1
                    while j < n and temps[j] <= temps[i]:
                        j = j + answer[j] if answer[j] else n
                    if j < n:
                        answer[i] = j - i
                return answer
            """),
        "next day of each temperature, backward": source("""
            def days_until_warmer(temps):
                next_day = [None] * 101
                answer = [0] * len(temps)
                for i in range(len(temps) - 1, -1, -1):
                    later = [d for d in next_day[temps[i] + 1:] if d is not None]
                    if later:
                        answer[i] = min(later) - i
                    next_day[temps[i]] = i
                return answer
            """),
        "warmest first, bisect into later days": source("""
            from bisect import bisect_right, insort
            from itertools import groupby

            def days_until_warmer(temps):
                answer, warmer = [0] * len(temps), []
                order = sorted(range(len(temps)), key=lambda i: -temps[i])
                for _, same in groupby(order, key=lambda i: temps[i]):
                    same = list(same)
                    for i in same:
                        k = bisect_right(warmer, i)
                        if k < len(warmer):
                            answer[i] = warmer[k] - i
                    for i in same:
                        insort(warmer, i)
                return answer
            """),
        "scan forward from every day": source("""
            def days_until_warmer(temps):
                answer = [0] * len(temps)
                for i in range(len(temps)):
                    for j in range(i + 1, len(temps)):
                        if temps[j] > temps[i]:
                            answer[i] = j - i
                            break
                return answer
            """),
        "next() over a generator per day": source("""
            def days_until_warmer(temps):
                n = len(temps)
                return [next((j - i for j in range(i + 1, n) if temps[j] > t), 0)
                        for i, t in enumerate(temps)]
            """),
    },
)


SPECS = [LIS_LENGTH, MERGE_INTERVALS, COUNT_ISLANDS, COIN_CHANGE_WAYS, LONGEST_UNIQUE_SUBSTRING,
         KTH_SMALLEST_MATRIX, TOPOLOGICAL_ORDER, DAYS_UNTIL_WARMER]
