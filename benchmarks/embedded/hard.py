"""Hard embedded problems: a classic algorithm beats the obvious DP or scan by a complexity class.

Each spec carries at least six references spanning at least two complexity
classes (naive quadratic scans, textbook DP, the optimal algorithm, library
versions with heapq / bisect / itertools); the first one is the most
trustworthy and writes the expected outputs.  The last cases of every
generator are large enough that the slow references take a few tenths of a
second in all while the fast ones take a few hundredths.
"""

from __future__ import annotations

import random

from .spec import CASES, Spec, StdioForm, numbers_form, source, stdin_main


def _scaled(index: int, sizes: tuple[int, ...]) -> int | None:
    """The size of one of the last ``len(sizes)`` cases, or None for the small ones before them."""
    offset = index - (CASES - len(sizes))
    return sizes[offset] if offset >= 0 else None


# -- edit distance -------------------------------------------------------------------------------

def _mutate(rng: random.Random, text: str, edits: int, alphabet: str) -> str:
    chars = list(text)
    for _ in range(edits):
        kind = rng.randrange(3)
        if kind == 0 or not chars:
            chars.insert(rng.randint(0, len(chars)), rng.choice(alphabet))
        elif kind == 1:
            del chars[rng.randrange(len(chars))]
        else:
            chars[rng.randrange(len(chars))] = rng.choice(alphabet)
    return "".join(chars)


def _edit_case(rng: random.Random, index: int) -> tuple[str, str]:
    fixed = [("", ""), ("", "abc"), ("kitten", "sitting"), ("sunday", "sunday")]
    if index < len(fixed):
        return fixed[index]
    size = _scaled(index, (60, 130, 200, 280))
    if size is None:
        return ("".join(rng.choice("ab") for _ in range(rng.randint(1, 12))),
                "".join(rng.choice("ab") for _ in range(rng.randint(1, 12))))
    a = "".join(rng.choice("acgt") for _ in range(size))
    if index % 2:  # a close relative: the banded algorithm stops early
        return a, _mutate(rng, a, size // 8, "acgt")
    return a, "".join(rng.choice("acgt") for _ in range(size - rng.randint(0, size // 5)))


EDIT_MAIN = stdin_main("""
    data = sys.stdin.read().split()
    n, m = int(data[0]), int(data[1])
    words = data[2:]
    a = words.pop(0) if n else ""
    b = words.pop(0) if m else ""
    print(edit_distance(a, b))
    """)

EDIT_DISTANCE = Spec(
    slug="edit-distance",
    title="Edit distance",
    difficulty="hard",
    tags=("string", "dynamic programming"),
    statement=("Given two strings `a` and `b` of lowercase letters (each of length at most 300, "
               "possibly empty), return the minimum number of single-character operations "
               "(insert a character, delete a character, replace a character by another) that turn "
               "`a` into `b`."),
    signature="edit_distance(a: str, b: str) -> int",
    generate=_edit_case,
    references={
        "two-row DP O(nm)": source("""
            def edit_distance(a, b):
                prev = list(range(len(b) + 1))
                for i, ca in enumerate(a, 1):
                    cur = [i] + [0] * len(b)
                    for j, cb in enumerate(b, 1):
                        cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
                    prev = cur
                return prev[-1]
            """),
        "full table DP O(nm)": source("""
            def edit_distance(a, b):
                n, m = len(a), len(b)
                table = [[0] * (m + 1) for _ in range(n + 1)]
                for i in range(n + 1):
                    table[i][0] = i
                for j in range(m + 1):
                    table[0][j] = j
                for i in range(1, n + 1):
                    for j in range(1, m + 1):
                        if a[i - 1] == b[j - 1]:
                            table[i][j] = table[i - 1][j - 1]
                        else:
                            table[i][j] = 1 + min(table[i - 1][j], table[i][j - 1], table[i - 1][j - 1])
                return table[n][m]
            """),
        "memoised recursion (lru_cache)": source("""
            from functools import lru_cache

            def edit_distance(a, b):
                @lru_cache(maxsize=None)
                def dist(i, j):
                    if i == len(a):
                        return len(b) - j
                    if j == len(b):
                        return len(a) - i
                    if a[i] == b[j]:
                        return dist(i + 1, j + 1)
                    return 1 + min(dist(i + 1, j), dist(i, j + 1), dist(i + 1, j + 1))

                return dist(0, 0)
            """),
        "row DP with accumulate(min)": source("""
            from itertools import accumulate

            def edit_distance(a, b):
                prev = list(range(len(b) + 1))
                for i, ca in enumerate(a, 1):
                    # best over deletions and replacements, then insertions as a running minimum
                    vertical = [i] + [min(up + 1, diag + (ca != cb))
                                      for up, diag, cb in zip(prev[1:], prev, b)]
                    shifted = accumulate((v - j for j, v in enumerate(vertical)), min)
                    prev = [v + j for j, v in enumerate(shifted)]
                return prev[-1]
            """),
        "Ukkonen band doubling O((n+m)d)": source("""
            def _banded(a, b, band):
                n, m = len(a), len(b)
                inf = n + m + 1
                prev = [j if j <= band else inf for j in range(m + 1)]
                for i in range(1, n + 1):
                    cur = [inf] * (m + 1)
                    if i <= band:
                        cur[0] = i
                    ca = a[i - 1]
                    for j in range(max(1, i - band), min(m, i + band) + 1):
                        cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != b[j - 1]))
                    prev = cur
                return prev[m]

            def edit_distance(a, b):
                band = max(1, abs(len(a) - len(b)))
                while True:
                    found = _banded(a, b, band)
                    if found <= band:
                        return found
                    band *= 2
            """),
        "bit-parallel (Myers/Hyyro) O(n*m/w)": source("""
            def edit_distance(a, b):
                m = len(a)
                if m == 0 or not b:
                    return m + len(b)
                match = {}
                for i, c in enumerate(a):
                    match[c] = match.get(c, 0) | (1 << i)
                mask = (1 << m) - 1
                top = 1 << (m - 1)
                plus_v, minus_v, score = mask, 0, m
                for c in b:
                    eq = match.get(c, 0)
                    xv = eq | minus_v
                    xh = (((eq & plus_v) + plus_v) ^ plus_v) | eq
                    plus_h = minus_v | ~(xh | plus_v)
                    minus_h = plus_v & xh
                    if plus_h & top:
                        score += 1
                    elif minus_h & top:
                        score -= 1
                    plus_h = (plus_h << 1) | 1
                    minus_h = minus_h << 1
                    plus_v = (minus_h | ~(xv | plus_h)) & mask
                    minus_v = plus_h & xv & mask
                return score
            """),
    },
    stdio=StdioForm(render_input=lambda a, b: f"{len(a)} {len(b)}\n{a}\n{b}\n", main=EDIT_MAIN),
)


# -- 0/1 knapsack --------------------------------------------------------------------------------

def _knapsack_case(rng: random.Random, index: int) -> tuple[list[int], list[int], int]:
    fixed = [([], [], 10), ([5], [10], 4), ([5], [10], 5), ([1, 3, 4, 5], [1, 4, 5, 7], 7),
             ([2, 2, 2], [3, 3, 3], 0)]
    if index < len(fixed):
        return fixed[index]
    size = _scaled(index, (30, 45, 60, 75))
    count, top = (size, 60) if size else (rng.randint(5, 10), 10)
    weights = [rng.randint(1, top) for _ in range(count)]
    values = [w * 10 + rng.randint(-5, 5) if index % 2 else rng.randint(1, 1000) for w in weights]
    return weights, values, sum(weights) // 2


KNAPSACK = Spec(
    slug="knapsack-01",
    title="0/1 knapsack",
    difficulty="hard",
    tags=("array", "dynamic programming"),
    statement=("Given the `weights` and `values` of n items (n <= 100, weights between 1 and 100, values "
               "between 1 and 1000) and a bag that holds a total weight of at most `capacity` "
               "(0 <= capacity <= 5000), return the largest total value of a set of items, each used "
               "at most once, whose total weight is at most `capacity`."),
    signature="knapsack(weights: list[int], values: list[int], capacity: int) -> int",
    generate=_knapsack_case,
    references={
        "one-row DP over capacities O(nW)": source("""
            def knapsack(weights, values, capacity):
                best = [0] * (capacity + 1)  # best[c]: most value within weight c
                for w, v in zip(weights, values):
                    for c in range(capacity, w - 1, -1):
                        if best[c - w] + v > best[c]:
                            best[c] = best[c - w] + v
                return best[capacity]
            """),
        "full table DP O(nW)": source("""
            def knapsack(weights, values, capacity):
                n = len(weights)
                table = [[0] * (capacity + 1) for _ in range(n + 1)]
                for i in range(1, n + 1):
                    w, v = weights[i - 1], values[i - 1]
                    for c in range(capacity + 1):
                        table[i][c] = table[i - 1][c]
                        if w <= c and table[i - 1][c - w] + v > table[i][c]:
                            table[i][c] = table[i - 1][c - w] + v
                return table[n][capacity]
            """),
        "row DP with shifted rows O(nW)": source("""
            def knapsack(weights, values, capacity):
                best = [0] * (capacity + 1)
                for w, v in zip(weights, values):
                    if w <= capacity:
                        best = best[:w] + [max(a, b + v) for a, b in zip(best[w:], best)]
                return best[capacity]
            """),
        "memoised recursion (lru_cache)": source("""
            from functools import lru_cache

            def knapsack(weights, values, capacity):
                @lru_cache(maxsize=None)
                def best(i, room):
                    if i == len(weights):
                        return 0
                    skip = best(i + 1, room)
                    if weights[i] <= room:
                        return max(skip, values[i] + best(i + 1, room - weights[i]))
                    return skip

                return best(0, capacity)
            """),
        "dict of reachable weights": source("""
            def knapsack(weights, values, capacity):
                best = {0: 0}  # total weight -> most value
                for w, v in zip(weights, values):
                    for total, value in list(best.items()):
                        if total + w <= capacity and value + v > best.get(total + w, -1):
                            best[total + w] = value + v
                return max(best.values())
            """),
        "Pareto front of (weight, value) with heapq.merge": source("""
            from heapq import merge

            def knapsack(weights, values, capacity):
                front = [(0, 0)]  # weights and values both increasing: no pair dominates another
                for w, v in zip(weights, values):
                    shifted = [(a + w, b + v) for a, b in front if a + w <= capacity]
                    kept = []
                    for a, b in merge(front, shifted):
                        if not kept or b > kept[-1][1]:
                            if kept and kept[-1][0] == a:
                                kept[-1] = (a, b)
                            else:
                                kept.append((a, b))
                    front = kept
                return front[-1][1]
            """),
    },
)


# -- count inversions ----------------------------------------------------------------------------

def _inversions_case(rng: random.Random, index: int) -> tuple[list[int]]:
    fixed: list[list[int]] = [[], [1], [2, 1], [1, 1, 1], [5, 4, 3, 2, 1]]
    if index < len(fixed):
        return (fixed[index],)
    size = _scaled(index, (500, 1000, 1500, 2000))
    if size is None:
        return ([rng.randint(0, 5) for _ in range(rng.randint(5, 15))],)
    spread = 10 if index % 2 else 10 ** 6  # many ties in every other case
    return ([rng.randint(-spread, spread) for _ in range(size)],)


COUNT_INVERSIONS = Spec(
    slug="count-inversions",
    title="Count inversions",
    difficulty="hard",
    tags=("array", "divide and conquer", "sorting"),
    statement=("Given a list of integers `nums` (length at most 3000), return the number of "
               "inversions: index pairs i < j with nums[i] > nums[j] (equal values are not an "
               "inversion)."),
    signature="count_inversions(nums: list[int]) -> int",
    generate=_inversions_case,
    references={
        "merge sort O(n log n)": source("""
            def _sort_count(items):
                if len(items) <= 1:
                    return items, 0
                mid = len(items) // 2
                left, a = _sort_count(items[:mid])
                right, b = _sort_count(items[mid:])
                merged, count, i, j = [], a + b, 0, 0
                while i < len(left) and j < len(right):
                    if right[j] < left[i]:
                        merged.append(right[j])
                        count += len(left) - i
                        j += 1
                    else:
                        merged.append(left[i])
                        i += 1
                merged += left[i:]
                merged += right[j:]
                return merged, count

            def count_inversions(nums):
                return _sort_count(list(nums))[1]
            """),
        "bottom-up merge sort": source("""
            def count_inversions(nums):
                items, count, width = list(nums), 0, 1
                while width < len(items):
                    merged = []
                    for lo in range(0, len(items), 2 * width):
                        left, right = items[lo:lo + width], items[lo + width:lo + 2 * width]
                        i = j = 0
                        while i < len(left) and j < len(right):
                            if right[j] < left[i]:
                                merged.append(right[j])
                                count += len(left) - i
                                j += 1
                            else:
                                merged.append(left[i])
                                i += 1
                        merged += left[i:] + right[j:]
                    items, width = merged, 2 * width
                return count
            """),
        "Fenwick tree over ranks O(n log n)": source("""
            def count_inversions(nums):
                rank = {v: i for i, v in enumerate(sorted(set(nums)), 1)}
                tree = [0] * (len(rank) + 1)
                count = 0
                for seen, x in enumerate(nums):
                    i = rank[x]
                    not_greater = 0
                    while i > 0:
                        not_greater += tree[i]
                        i -= i & -i
                    count += seen - not_greater
                    i = rank[x]
                    while i < len(tree):
                        tree[i] += 1
                        i += i & -i
                return count
            """),
        "divide and conquer with sorted halves and bisect O(n log^2 n)": source("""
            from bisect import bisect_left

            def count_inversions(nums):
                count = 0
                stack = [(0, len(nums))]
                while stack:
                    lo, hi = stack.pop()
                    if hi - lo < 2:
                        continue
                    mid = (lo + hi) // 2
                    left = nums[lo:mid]
                    right = sorted(nums[mid:hi])
                    count += sum(bisect_left(right, x) for x in left)
                    stack += [(lo, mid), (mid, hi)]
                return count
            """),
        "insort into a sorted prefix O(n^2) moves": source("""
            from bisect import bisect_right, insort

            def count_inversions(nums):
                seen, count = [], 0
                for x in nums:
                    count += len(seen) - bisect_right(seen, x)
                    insort(seen, x)
                return count
            """),
        "all pairs O(n^2)": source("""
            def count_inversions(nums):
                count = 0
                for i, x in enumerate(nums):
                    for y in nums[i + 1:]:
                        if x > y:
                            count += 1
                return count
            """),
    },
    stdio=numbers_form("count_inversions(nums)"),
)


# -- largest rectangle in a histogram ------------------------------------------------------------

def _histogram_case(rng: random.Random, index: int) -> tuple[list[int]]:
    fixed: list[list[int]] = [[], [0], [4], [2, 1, 5, 6, 2, 3], [3, 3, 3, 3]]
    if index < len(fixed):
        return (fixed[index],)
    size = _scaled(index, (400, 800, 1100, 1400))
    if size is None:
        return ([rng.randint(0, 6) for _ in range(rng.randint(5, 15))],)
    if index % 2:  # a mountain with noise: wide rectangles
        return ([min(i, size - i) * 10 + rng.randint(0, 50) for i in range(size)],)
    return ([rng.randint(0, 10_000) for _ in range(size)],)


LARGEST_RECTANGLE = Spec(
    slug="largest-rectangle-in-histogram",
    title="Largest rectangle in a histogram",
    difficulty="hard",
    tags=("array", "stack", "monotonic stack"),
    statement=("A histogram has bars of width 1 and heights `heights` (non-negative integers, at most "
               "2000 bars, each at most 10^5), standing side by side. Return the largest area of an "
               "axis-aligned rectangle that fits inside the histogram, that is the maximum over all "
               "ranges of bars of (number of bars) * (lowest bar in the range); 0 for no bars."),
    signature="largest_rectangle(heights: list[int]) -> int",
    generate=_histogram_case,
    references={
        "monotonic stack O(n)": source("""
            def largest_rectangle(heights):
                best, stack = 0, []  # indices of bars with increasing heights
                for i, h in enumerate(heights + [0]):
                    start = i
                    while stack and heights[stack[-1]] >= h:
                        top = stack.pop()
                        start = stack[-1] + 1 if stack else 0
                        best = max(best, heights[top] * (i - start))
                    stack.append(i)
                return best
            """),
        "nearest lower bar on each side, two passes O(n)": source("""
            def largest_rectangle(heights):
                n = len(heights)
                left, right, stack = [-1] * n, [n] * n, []
                for i in range(n):
                    while stack and heights[stack[-1]] >= heights[i]:
                        stack.pop()
                    left[i] = stack[-1] if stack else -1
                    stack.append(i)
                stack = []
                for i in reversed(range(n)):
                    while stack and heights[stack[-1]] >= heights[i]:
                        stack.pop()
                    right[i] = stack[-1] if stack else n
                    stack.append(i)
                return max((h * (right[i] - left[i] - 1) for i, h in enumerate(heights)), default=0)
            """),
        "union-find from the tallest bar down O(n log n)": source("""
            def largest_rectangle(heights):
                n = len(heights)
                parent, left, right = list(range(n)), list(range(n)), list(range(n))
                active = [False] * n

                def find(x):
                    while parent[x] != x:
                        parent[x] = parent[parent[x]]
                        x = parent[x]
                    return x

                best = 0
                for i in sorted(range(n), key=heights.__getitem__, reverse=True):
                    active[i] = True
                    for j in (i - 1, i + 1):
                        if 0 <= j < n and active[j]:
                            a, b = find(i), find(j)
                            parent[b] = a
                            left[a], right[a] = min(left[a], left[b]), max(right[a], right[b])
                    root = find(i)
                    best = max(best, heights[i] * (right[root] - left[root] + 1))
                return best
            """),
        "divide and conquer on a sparse-table minimum O(n log n)": source("""
            def largest_rectangle(heights):
                n = len(heights)
                if n == 0:
                    return 0
                lower = lambda a, b: a if heights[a] <= heights[b] else b
                table, width = [list(range(n))], 1
                while 2 * width <= n:
                    prev = table[-1]
                    table.append([lower(prev[i], prev[i + width]) for i in range(n - 2 * width + 1)])
                    width *= 2
                best, stack = 0, [(0, n - 1)]
                while stack:
                    lo, hi = stack.pop()
                    if lo > hi:
                        continue
                    level = (hi - lo + 1).bit_length() - 1
                    m = lower(table[level][lo], table[level][hi - (1 << level) + 1])
                    best = max(best, heights[m] * (hi - lo + 1))
                    stack += [(lo, m - 1), (m + 1, hi)]
                return best
            """),
        "lowest bars first, insort the blockers": source("""
            from bisect import bisect_left

            def largest_rectangle(heights):
                blockers, best = [-1, len(heights)], 0
                for i in sorted(range(len(heights)), key=heights.__getitem__):
                    k = bisect_left(blockers, i)
                    best = max(best, heights[i] * (blockers[k] - blockers[k - 1] - 1))
                    blockers.insert(k, i)
                return best
            """),
        "every range, running minimum O(n^2)": source("""
            def largest_rectangle(heights):
                best = 0
                for i in range(len(heights)):
                    low = heights[i]
                    for j in range(i, len(heights)):
                        if heights[j] < low:
                            low = heights[j]
                        if low * (j - i + 1) > best:
                            best = low * (j - i + 1)
                return best
            """),
    },
)


# -- sliding window maximum ----------------------------------------------------------------------

def _window_case(rng: random.Random, index: int) -> tuple[list[int], int]:
    fixed = [([5], 1), ([1, 3, -1, -3, 5, 3, 6, 7], 3), ([4, 4, 4, 4], 2), ([9, 8, 7, 6, 5], 5),
             ([1, 2, 3, 4, 5, 6], 1)]
    if index < len(fixed):
        return fixed[index]
    size = _scaled(index, (2000, 4000, 6000, 8000))
    if size is None:
        nums = [rng.randint(-20, 20) for _ in range(rng.randint(5, 20))]
        return nums, rng.randint(1, len(nums))
    if index % 2:  # a falling trend keeps many candidates alive
        return [size - i + rng.randint(0, 40) for i in range(size)], size // 16
    return [rng.randint(-10 ** 6, 10 ** 6) for _ in range(size)], size // 16


SLIDING_WINDOW_MAX = Spec(
    slug="sliding-window-maximum",
    title="Sliding window maximum",
    difficulty="hard",
    tags=("array", "queue", "monotonic queue", "heap"),
    statement=("Given a list of integers `nums` (length n, 1 <= n <= 20000) and a window size k "
               "(1 <= k <= n), return the list of the n - k + 1 maxima of the windows "
               "nums[i:i + k], in order of i."),
    signature="sliding_window_max(nums: list[int], k: int) -> list[int]",
    generate=_window_case,
    references={
        "monotonic deque O(n)": source("""
            from collections import deque

            def sliding_window_max(nums, k):
                window, out = deque(), []  # indices, values decreasing
                for i, x in enumerate(nums):
                    while window and nums[window[-1]] <= x:
                        window.pop()
                    window.append(i)
                    if window[0] <= i - k:
                        window.popleft()
                    if i >= k - 1:
                        out.append(nums[window[0]])
                return out
            """),
        "block prefix and suffix maxima O(n)": source("""
            def sliding_window_max(nums, k):
                n = len(nums)
                prefix, suffix = nums[:], nums[:]
                for i in range(1, n):
                    if i % k:
                        prefix[i] = max(prefix[i - 1], nums[i])
                for i in range(n - 2, -1, -1):
                    if (i + 1) % k:
                        suffix[i] = max(suffix[i + 1], nums[i])
                return [max(suffix[i], prefix[i + k - 1]) for i in range(n - k + 1)]
            """),
        "heap with lazy deletion O(n log n)": source("""
            import heapq

            def sliding_window_max(nums, k):
                heap, out = [], []
                for i, x in enumerate(nums):
                    heapq.heappush(heap, (-x, i))
                    if i >= k - 1:
                        while heap[0][1] <= i - k:
                            heapq.heappop(heap)
                        out.append(-heap[0][0])
                return out
            """),
        "sparse table of doubling windows O(n log k)": source("""
            def sliding_window_max(nums, k):
                level, width = nums[:], 1  # level[i] = max(nums[i:i + width])
                while 2 * width <= k:
                    level = [max(a, b) for a, b in zip(level, level[width:])]
                    width *= 2
                shift = k - width
                return [max(a, b) for a, b in zip(level, level[shift:])]
            """),
        "sorted window with bisect O(nk) moves": source("""
            from bisect import bisect_left, insort

            def sliding_window_max(nums, k):
                window = sorted(nums[:k])
                out = [window[-1]]
                for i in range(k, len(nums)):
                    del window[bisect_left(window, nums[i - k])]
                    insort(window, nums[i])
                    out.append(window[-1])
                return out
            """),
        "max of every slice O(nk)": source("""
            def sliding_window_max(nums, k):
                return [max(nums[i:i + k]) for i in range(len(nums) - k + 1)]
            """),
    },
)


# -- cheapest path through a weighted grid -------------------------------------------------------

def _grid_case(rng: random.Random, index: int) -> tuple[list[list[int]]]:
    detour = [[1, 9, 1, 1, 1], [1, 9, 1, 9, 1], [1, 1, 1, 9, 1]]  # the cheapest path goes up
    fixed = [[[5]], [[1, 2, 3, 4]], [[2], [7], [1]], detour]
    if index < len(fixed):
        return (fixed[index],)
    size = _scaled(index, (16, 24, 32, 40))
    if size is None:
        rows, cols = rng.randint(2, 6), rng.randint(2, 6)
        return ([[rng.randint(1, 9) for _ in range(cols)] for _ in range(rows)],)
    # every other case: cheap cells among expensive ones, so the best path winds up and left too
    costs = (1, 1, 1, 9, 9) if index % 2 else tuple(range(1, 10))
    return ([[rng.choice(costs) for _ in range(size)] for _ in range(size)],)


GRID_MAIN = stdin_main("""
    data = sys.stdin.read().split()
    rows, cols = int(data[0]), int(data[1])
    values = list(map(int, data[2:2 + rows * cols]))
    print(min_path_cost([values[r * cols:(r + 1) * cols] for r in range(rows)]))
    """)

MIN_PATH_COST = Spec(
    slug="cheapest-grid-path",
    title="Cheapest path through a weighted grid",
    difficulty="hard",
    tags=("graph", "shortest path", "heap", "matrix"),
    statement=("A grid of `rows` x `cols` cells (1 <= rows, cols <= 60) holds a cost between 1 and 9 "
               "in each cell. A path starts in the top-left cell, ends in the bottom-right cell and "
               "moves up, down, left or right to an adjacent cell at each step (it may turn back and "
               "wind around). The cost of a path is the sum of the costs of all the cells it visits, "
               "the first and the last included. Return the minimum cost of a path."),
    signature="min_path_cost(grid: list[list[int]]) -> int",
    generate=_grid_case,
    references={
        "Dijkstra with heapq O(V log V)": source("""
            import heapq

            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                dist = [[float("inf")] * cols for _ in range(rows)]
                dist[0][0] = grid[0][0]
                heap = [(grid[0][0], 0, 0)]
                while heap:
                    d, r, c = heapq.heappop(heap)
                    if (r, c) == (rows - 1, cols - 1):
                        return d
                    if d > dist[r][c]:
                        continue
                    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                        if 0 <= nr < rows and 0 <= nc < cols and d + grid[nr][nc] < dist[nr][nc]:
                            dist[nr][nc] = d + grid[nr][nc]
                            heapq.heappush(heap, (dist[nr][nc], nr, nc))
            """),
        "A* with a Manhattan-distance bound": source("""
            import heapq

            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                best = {(0, 0): grid[0][0]}
                heap = [(grid[0][0] + rows + cols - 2, grid[0][0], 0, 0)]
                while heap:
                    _, g, r, c = heapq.heappop(heap)
                    if (r, c) == (rows - 1, cols - 1):
                        return g
                    if g > best[r, c]:
                        continue
                    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                        if 0 <= nr < rows and 0 <= nc < cols:
                            ng = g + grid[nr][nc]
                            if ng < best.get((nr, nc), ng + 1):
                                best[nr, nc] = ng
                                heapq.heappush(heap, (ng + rows - 1 - nr + cols - 1 - nc, ng, nr, nc))
            """),
        "Dial's buckets (small integer costs)": source("""
            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                flat = [v for row in grid for v in row]
                target = rows * cols - 1
                dist = [None] * len(flat)
                buckets = {flat[0]: [0]}
                current = flat[0]
                while True:
                    for cell in buckets.pop(current, ()):
                        if dist[cell] is not None:
                            continue
                        dist[cell] = current
                        if cell == target:
                            return current
                        r, c = divmod(cell, cols)
                        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                            nxt = nr * cols + nc
                            if 0 <= nr < rows and 0 <= nc < cols and dist[nxt] is None:
                                buckets.setdefault(current + flat[nxt], []).append(nxt)
                    current += 1
            """),
        "SPFA (queue-based Bellman-Ford)": source("""
            from collections import deque

            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                dist = {(0, 0): grid[0][0]}
                queue, queued = deque([(0, 0)]), {(0, 0)}
                while queue:
                    r, c = queue.popleft()
                    queued.discard((r, c))
                    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                        if 0 <= nr < rows and 0 <= nc < cols:
                            cand = dist[r, c] + grid[nr][nc]
                            if cand < dist.get((nr, nc), cand + 1):
                                dist[nr, nc] = cand
                                if (nr, nc) not in queued:
                                    queued.add((nr, nc))
                                    queue.append((nr, nc))
                return dist[rows - 1, cols - 1]
            """),
        "Dijkstra scanning the frontier O(V*F)": source("""
            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                frontier, done = {(0, 0): grid[0][0]}, set()
                while True:
                    cell = min(frontier, key=frontier.get)
                    d = frontier.pop(cell)
                    if cell == (rows - 1, cols - 1):
                        return d
                    done.add(cell)
                    r, c = cell
                    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                        if 0 <= nr < rows and 0 <= nc < cols and (nr, nc) not in done:
                            if d + grid[nr][nc] < frontier.get((nr, nc), float("inf")):
                                frontier[nr, nc] = d + grid[nr][nc]
            """),
        "Dijkstra scanning every cell for the minimum O(V^2)": source("""
            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                flat = [v for row in grid for v in row]
                unseen = 9 * len(flat) + 1  # more than any path costs
                tentative, done = [unseen] * len(flat), [False] * len(flat)
                tentative[0] = flat[0]
                while True:
                    d = min(tentative)
                    cell = tentative.index(d)
                    if cell == len(flat) - 1:
                        return d
                    tentative[cell], done[cell] = unseen, True
                    r, c = divmod(cell, cols)
                    for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                        nxt = nr * cols + nc
                        if 0 <= nr < rows and 0 <= nc < cols and not done[nxt]:
                            tentative[nxt] = min(tentative[nxt], d + flat[nxt])
            """),
        "Bellman-Ford sweeps until stable O(V^2) worst": source("""
            def min_path_cost(grid):
                rows, cols = len(grid), len(grid[0])
                inf = float("inf")
                dist = [[inf] * cols for _ in range(rows)]
                dist[0][0] = grid[0][0]
                changed = True
                while changed:
                    changed = False
                    for r in range(rows):
                        for c in range(cols):
                            best = dist[r][c]
                            for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                                if 0 <= nr < rows and 0 <= nc < cols and dist[nr][nc] + grid[r][c] < best:
                                    best = dist[nr][nc] + grid[r][c]
                            if best < dist[r][c]:
                                dist[r][c] = best
                                changed = True
                return dist[rows - 1][cols - 1]
            """),
    },
    stdio=StdioForm(
        render_input=lambda grid: (f"{len(grid)} {len(grid[0])}\n"
                                   + "".join(" ".join(map(str, row)) + "\n" for row in grid)),
        main=GRID_MAIN),
)


# -- number of distinct subsequences -------------------------------------------------------------

def _subsequences_case(rng: random.Random, index: int) -> tuple[str]:
    fixed = ["", "a", "aaa", "abc", "aba", "abab"]
    if index < len(fixed):
        return (fixed[index],)
    size = _scaled(index, (1000, 2000, 3000, 4000))
    alphabet = "abcdefghijklmnopqrstuvwxyz" if index % 2 else "abc"
    return ("".join(rng.choice(alphabet) for _ in range(size or 0)),)


DISTINCT_SUBSEQUENCES = Spec(
    slug="count-distinct-subsequences",
    title="Number of distinct subsequences",
    difficulty="hard",
    tags=("string", "dynamic programming"),
    statement=("Given a string `s` of lowercase letters (length at most 5000), return how many "
               "different non-empty strings are subsequences of `s` (obtained by deleting any number "
               "of characters, keeping the order of the rest), modulo 1_000_000_007. Equal strings "
               "obtained from different positions count once: \"aba\" has 6 (a, b, ab, aa, ba, aba)."),
    signature="count_distinct_subsequences(s: str) -> int",
    generate=_subsequences_case,
    references={
        "doubling minus the last occurrence O(n)": source("""
            MOD = 1_000_000_007

            def count_distinct_subsequences(s):
                total = 1  # the empty subsequence included
                before_last = {}
                for c in s:
                    before_last[c], total = total, (2 * total - before_last.get(c, 0)) % MOD
                return (total - 1) % MOD
            """),
        "count by last letter, running total O(n)": source("""
            MOD = 1_000_000_007

            def count_distinct_subsequences(s):
                ending, total = {}, 0
                for c in s:
                    fresh = (total + 1) % MOD  # every subsequence so far, and the empty one, plus c
                    total = (total + fresh - ending.get(c, 0)) % MOD
                    ending[c] = fresh
                return total
            """),
        "count by last letter, summing 26 counters O(26n)": source("""
            MOD = 1_000_000_007

            def count_distinct_subsequences(s):
                ending = [0] * 26
                for c in s:
                    ending[ord(c) - 97] = (sum(ending) + 1) % MOD
                return sum(ending) % MOD
            """),
        "subsequence automaton from the back O(26n)": source("""
            MOD = 1_000_000_007

            def count_distinct_subsequences(s):
                # after[i] = distinct non-empty subsequences of s[i:]; each starts with its first
                # letter c taken at the first occurrence of c at or after i
                after = [0] * (len(s) + 1)
                nxt = {}
                for i in range(len(s) - 1, -1, -1):
                    nxt[s[i]] = i
                    after[i] = sum(1 + after[j + 1] for j in nxt.values()) % MOD
                return after[0]
            """),
        "leftmost embeddings with prefix sums O(n)": source("""
            MOD = 1_000_000_007

            def count_distinct_subsequences(s):
                # ends[i]: subsequences whose leftmost embedding ends at i; prefix[i] = sum(ends[:i])
                prefix, last = [0], {}
                for i, c in enumerate(s):
                    if c in last:
                        ends = prefix[i] - prefix[last[c]]
                    else:
                        ends = prefix[i] + 1
                    last[c] = i
                    prefix.append((prefix[i] + ends) % MOD)
                return prefix[-1] % MOD
            """),
        "leftmost embeddings, re-summing every prefix O(n^2)": source("""
            MOD = 1_000_000_007

            def count_distinct_subsequences(s):
                ends, last = [], {}
                for i, c in enumerate(s):
                    count = sum(ends) + 1
                    if c in last:
                        count -= sum(ends[:last[c]]) + 1
                    last[c] = i
                    ends.append(count % MOD)
                return sum(ends) % MOD
            """),
    },
)


# -- weighted interval scheduling (any optimal schedule) -----------------------------------------

def _intervals_case(rng: random.Random, index: int) -> tuple[list[list[int]]]:
    fixed: list[list[list[int]]] = [[], [[0, 5, 3]], [[0, 2, 4], [2, 4, 4], [1, 3, 8]],
                                    [[0, 3, 2], [3, 6, 2], [0, 6, 4]]]
    if index < len(fixed):
        return (fixed[index],)
    size = _scaled(index, (250, 500, 750, 1000))
    if size is None:
        size = rng.randint(5, 12)
    horizon = 4 * size
    out = []
    for _ in range(size):
        start = rng.randrange(horizon)
        out.append([start, start + rng.randint(1, 20), rng.randint(1, 6)])
    return (out,)


INTERVALS_VERIFY = source("""
    from bisect import bisect_right

    def verify(args, answer):
        intervals = args[0]
        if not isinstance(answer, list) or len(set(map(repr, answer))) != len(answer):
            return False
        if any(type(i) is not int or not 0 <= i < len(intervals) for i in answer):
            return False
        chosen = sorted((intervals[i] for i in answer), key=lambda iv: iv[0])
        if any(a[1] > b[0] for a, b in zip(chosen, chosen[1:])):
            return False
        by_end = sorted(intervals, key=lambda iv: iv[1])
        ends = [iv[1] for iv in by_end]
        best = [0]
        for k, (start, _, weight) in enumerate(by_end):
            best.append(max(best[k], best[bisect_right(ends, start, 0, k)] + weight))
        return sum(iv[2] for iv in chosen) == best[-1]
    """)

INTERVALS_MAIN = stdin_main("""
    data = list(map(int, sys.stdin.read().split()))
    n = data[0]
    intervals = [data[1 + 3 * i:4 + 3 * i] for i in range(n)]
    print(json.dumps(max_weight_schedule(intervals)))
    """, imports="import json\nimport sys")

WEIGHTED_SCHEDULE = Spec(
    slug="weighted-interval-scheduling",
    title="Weighted interval scheduling",
    difficulty="hard",
    tags=("array", "dynamic programming", "binary search", "sorting"),
    statement=("Given a list `intervals` of bookings [start, end, weight] (at most 1500 of them, "
               "0 <= start < end <= 10^5, 1 <= weight <= 100), choose bookings that pairwise do not "
               "overlap, maximising their total weight. A booking occupies the half-open time range "
               "[start, end), so one may end exactly when the next starts. Return the 0-based indices "
               "of the chosen bookings in any order; when several choices reach the maximum, any of "
               "them is accepted."),
    signature="max_weight_schedule(intervals: list[list[int]]) -> list[int]",
    generate=_intervals_case,
    references={
        "sort by end, DP with bisect O(n log n)": source("""
            from bisect import bisect_right

            def max_weight_schedule(intervals):
                order = sorted(range(len(intervals)), key=lambda i: intervals[i][1])
                ends = [intervals[i][1] for i in order]
                best, fits = [0], []  # best over the first k by end; fits[k]: how many end by its start
                for k, i in enumerate(order):
                    start, _, weight = intervals[i]
                    fits.append(bisect_right(ends, start, 0, k))
                    best.append(max(best[k], best[fits[k]] + weight))
                chosen, k = [], len(order)
                while k:
                    if best[k] == best[k - 1]:
                        k -= 1
                    else:
                        chosen.append(order[k - 1])
                        k = fits[k - 1]
                return sorted(chosen)
            """),
        "sort by start, suffix DP with bisect O(n log n)": source("""
            from bisect import bisect_left

            def max_weight_schedule(intervals):
                order = sorted(range(len(intervals)), key=lambda i: intervals[i][0])
                starts = [intervals[i][0] for i in order]
                n = len(order)
                best, after = [0] * (n + 1), [0] * n
                for k in range(n - 1, -1, -1):
                    _, end, weight = intervals[order[k]]
                    after[k] = bisect_left(starts, end, k + 1)
                    best[k] = max(best[k + 1], weight + best[after[k]])
                chosen, k = [], 0
                while k < n:
                    if best[k] == best[k + 1]:
                        k += 1
                    else:
                        chosen.append(order[k])
                        k = after[k]
                return chosen
            """),
        "sweep by start with a heap of open chains": source("""
            import heapq

            def max_weight_schedule(intervals):
                done_value, done_chain = 0, None  # best chain whose last booking has ended
                heap = []  # (end, -value, index, chain)
                for i in sorted(range(len(intervals)), key=lambda i: intervals[i][0]):
                    start, end, weight = intervals[i]
                    while heap and heap[0][0] <= start:
                        _, neg, _, chain = heapq.heappop(heap)
                        if -neg > done_value:
                            done_value, done_chain = -neg, chain
                    heapq.heappush(heap, (end, -(done_value + weight), i, (i, done_chain)))
                for _, neg, _, chain in heap:
                    if -neg > done_value:
                        done_value, done_chain = -neg, chain
                chosen = []
                while done_chain:
                    chosen.append(done_chain[0])
                    done_chain = done_chain[1]
                return chosen
            """),
        "DP over compressed time points": source("""
            def max_weight_schedule(intervals):
                times = sorted({t for start, end, _ in intervals for t in (start, end)})
                slot = {t: k for k, t in enumerate(times)}
                ending = [[] for _ in times]
                for i, (_, end, _) in enumerate(intervals):
                    ending[slot[end]].append(i)
                best, last = [0] * len(times), [None] * len(times)
                for t in range(1, len(times)):
                    best[t] = best[t - 1]
                    for i in ending[t]:
                        start, _, weight = intervals[i]
                        if best[slot[start]] + weight > best[t]:
                            best[t], last[t] = best[slot[start]] + weight, i
                chosen, t = [], len(times) - 1
                while t > 0:
                    if last[t] is None:
                        t -= 1
                    else:
                        chosen.append(last[t])
                        t = slot[intervals[last[t]][0]]
                return chosen
            """),
        "heaviest chain, pulling from every earlier booking O(n^2)": source("""
            def max_weight_schedule(intervals):
                order = sorted(range(len(intervals)), key=lambda i: intervals[i][1])
                value, parent = {}, {}
                for pos, i in enumerate(order):
                    start = intervals[i][0]
                    before = [j for j in order[:pos] if intervals[j][1] <= start]
                    prev = max(before, key=value.__getitem__, default=None)
                    value[i] = intervals[i][2] + (value[prev] if prev is not None else 0)
                    parent[i] = prev
                i = max(value, key=value.__getitem__, default=None)
                chosen = []
                while i is not None:
                    chosen.append(i)
                    i = parent[i]
                return chosen
            """),
        "heaviest chain, pushing to every later booking O(n^2)": source("""
            def max_weight_schedule(intervals):
                order = sorted(range(len(intervals)), key=lambda i: intervals[i][0])
                value = {i: intervals[i][2] for i in order}
                parent = dict.fromkeys(order)
                for pos, i in enumerate(order):
                    end = intervals[i][1]
                    for j in order[pos + 1:]:
                        if intervals[j][0] >= end and value[i] + intervals[j][2] > value[j]:
                            value[j], parent[j] = value[i] + intervals[j][2], i
                i = max(value, key=value.__getitem__, default=None)
                chosen = []
                while i is not None:
                    chosen.append(i)
                    i = parent[i]
                return chosen
            """),
    },
    stdio=StdioForm(
        render_input=lambda intervals: (f"{len(intervals)}\n"
                                        + "".join(f"{s} {e} {w}\n" for s, e, w in intervals)),
        main=INTERVALS_MAIN),
    verify=INTERVALS_VERIFY,
)


SPECS = [EDIT_DISTANCE, KNAPSACK, COUNT_INVERSIONS, LARGEST_RECTANGLE, SLIDING_WINDOW_MAX,
         MIN_PATH_COST, DISTINCT_SUBSEQUENCES, WEIGHTED_SCHEDULE]
