"""Easy embedded problems: one idea each, a library or linear answer beats the naive one."""

from __future__ import annotations

import random
import string

from .spec import Spec, StdioForm, numbers_form, source, stdin_main


# -- count pairs with a given sum ------------------------------------------------------------
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
    signature="count_pairs(nums: list[int], target: int) -> int",
    generate=_pairs_case,
    references={
        "hash map, one pass": source("""
            def count_pairs(nums, target):
                seen = {}
                total = 0
                for x in nums:
                    total += seen.get(target - x, 0)
                    seen[x] = seen.get(x, 0) + 1
                return total
            """),
        "Counter": source("""
            from collections import Counter

            def count_pairs(nums, target):
                c = Counter(nums)
                total = sum(c[x] * c[target - x] for x in c if x < target - x)
                if target % 2 == 0:
                    total += c[target // 2] * (c[target // 2] - 1) // 2
                return total
            """),
        "sort and two pointers": source("""
            def count_pairs(nums, target):
                a = sorted(nums)
                i, j, total = 0, len(a) - 1, 0
                while i < j:
                    s = a[i] + a[j]
                    if s < target:
                        i += 1
                    elif s > target:
                        j -= 1
                    elif a[i] == a[j]:
                        k = j - i + 1
                        total += k * (k - 1) // 2
                        break
                    else:
                        left = right = 1
                        while i + left < j and a[i + left] == a[i]:
                            left += 1
                        while j - right > i and a[j - right] == a[j]:
                            right += 1
                        total += left * right
                        i += left
                        j -= right
                return total
            """),
        "naive double loop": source("""
            def count_pairs(nums, target):
                total = 0
                for i in range(len(nums)):
                    for j in range(i + 1, len(nums)):
                        if nums[i] + nums[j] == target:
                            total += 1
                return total
            """),
        "itertools.combinations": source("""
            from itertools import combinations

            def count_pairs(nums, target):
                return sum(1 for a, b in combinations(nums, 2) if a + b == target)
            """),
        "count with list.count": source("""
            def count_pairs(nums, target):
                total = 0
                for i, x in enumerate(nums):
                    total += nums[i + 1:].count(target - x)
                return total
            """),
    },
    stdio=numbers_form("count_pairs(nums, rest[0])"),
)


# -- first unique character ------------------------------------------------------------------
def _unique_char_case(rng: random.Random, index: int) -> tuple[str]:
    if index < 3:
        return (["", "q", "xyzzyx"][index],)
    if index < 6:
        return ("".join(rng.choice("abcd") for _ in range(rng.randint(2, 14))),)
    # Large: 25 letters each repeated many times; the 26th, if present, once near the end.
    unique = rng.choice(string.ascii_lowercase)
    others = string.ascii_lowercase.replace(unique, "")
    size = 2000 * (index - 4)
    chars = [rng.choice(others) for _ in range(size)]
    if index != 8:
        chars.insert(rng.randint(size * 9 // 10, size), unique)
    return ("".join(chars),)


FIRST_UNIQUE_CHAR = Spec(
    slug="first-unique-char",
    title="First unique character",
    difficulty="easy",
    tags=("string", "hash table", "counting"),
    statement=("Given a string `s` of lowercase English letters (0 <= len(s) <= 10^4), return the index of "
               "the first character that occurs exactly once in `s`, or -1 if every character repeats."),
    signature="first_unique_char(s: str) -> int",
    generate=_unique_char_case,
    references={
        "Counter, two passes": source("""
            from collections import Counter

            def first_unique_char(s):
                counts = Counter(s)
                for i, c in enumerate(s):
                    if counts[c] == 1:
                        return i
                return -1
            """),
        "26 counters": source("""
            def first_unique_char(s):
                counts = [0] * 26
                for c in s:
                    counts[ord(c) - 97] += 1
                for i, c in enumerate(s):
                    if counts[ord(c) - 97] == 1:
                        return i
                return -1
            """),
        "first index and repeated set": source("""
            def first_unique_char(s):
                first = {}
                repeated = set()
                for i, c in enumerate(s):
                    if c in first:
                        repeated.add(c)
                    else:
                        first[c] = i
                return min((i for c, i in first.items() if c not in repeated), default=-1)
            """),
        "find and rfind per letter": source("""
            from string import ascii_lowercase

            def first_unique_char(s):
                singles = [i for c in ascii_lowercase if (i := s.find(c)) != -1 and i == s.rfind(c)]
                return min(singles, default=-1)
            """),
        "sort indices, group": source("""
            from itertools import groupby

            def first_unique_char(s):
                order = sorted(range(len(s)), key=s.__getitem__)
                singles = []
                for _, group in groupby(order, key=s.__getitem__):
                    group = list(group)
                    if len(group) == 1:
                        singles.append(group[0])
                return min(singles, default=-1)
            """),
        "naive str.count per position": source("""
            def first_unique_char(s):
                for i, c in enumerate(s):
                    if s.count(c) == 1:
                        return i
                return -1
            """),
    },
    stdio=StdioForm(render_input=lambda s: s + "\n",
                    main=stdin_main("print(first_unique_char(sys.stdin.read().strip()))")),
)


# -- valid anagram ---------------------------------------------------------------------------
def _anagram_case(rng: random.Random, index: int) -> tuple[str, str]:
    if index < 4:
        return [("", ""), ("a", "a"), ("aab", "abb"), ("ab", "abc")][index]
    size = rng.randint(3, 12) if index < 6 else 350 * (index - 4)
    s = [rng.choice(string.ascii_lowercase[:6 if index < 6 else 26]) for _ in range(size)]
    t = rng.sample(s, len(s))
    if index in (5, 8):  # one letter of t changed: not an anagram
        where = rng.randrange(size // 2, size)
        t[where] = "z" if t[where] != "z" else "y"
    return "".join(s), "".join(t)


VALID_ANAGRAM = Spec(
    slug="valid-anagram",
    title="Valid anagram",
    difficulty="easy",
    tags=("string", "hash table", "sorting"),
    statement=("Given two strings `s` and `t` of lowercase English letters (each of length at most 2000), "
               "return True if `t` is a rearrangement of the letters of `s` (every letter occurs the same "
               "number of times in both), else False."),
    signature="is_anagram(s: str, t: str) -> bool",
    generate=_anagram_case,
    references={
        "Counter equality": source("""
            from collections import Counter

            def is_anagram(s, t):
                return Counter(s) == Counter(t)
            """),
        "sorted equality": source("""
            def is_anagram(s, t):
                return sorted(s) == sorted(t)
            """),
        "26 counters": source("""
            def is_anagram(s, t):
                counts = [0] * 26
                for c in s:
                    counts[ord(c) - 97] += 1
                for c in t:
                    counts[ord(c) - 97] -= 1
                return not any(counts)
            """),
        "dict balance, early exit": source("""
            def is_anagram(s, t):
                if len(s) != len(t):
                    return False
                counts = {}
                for c in s:
                    counts[c] = counts.get(c, 0) + 1
                for c in t:
                    if counts.get(c, 0) == 0:
                        return False
                    counts[c] -= 1
                return True
            """),
        "str.count per distinct letter": source("""
            def is_anagram(s, t):
                return len(s) == len(t) and all(s.count(c) == t.count(c) for c in set(s))
            """),
        "naive matching with used flags": source("""
            def is_anagram(s, t):
                if len(s) != len(t):
                    return False
                used = [False] * len(t)
                for c in s:
                    for j, d in enumerate(t):
                        if d == c and not used[j]:
                            used[j] = True
                            break
                    else:
                        return False
                return True
            """),
    },
)


# -- move zeros ------------------------------------------------------------------------------
def _zeros_case(rng: random.Random, index: int) -> tuple[list[int]]:
    if index < 4:
        return ([[], [0], [7], [0, 0, -3, 0, 5]][index],)
    size = rng.randint(4, 12) if index < 6 else 300 * (index - 4)
    return ([0 if rng.random() < 0.3 else rng.randint(-99, 99) for _ in range(size)],)


MOVE_ZEROS = Spec(
    slug="move-zeros",
    title="Move zeros to the end",
    difficulty="easy",
    tags=("array", "two pointers"),
    statement=("Given a list of integers `nums` (0 <= len(nums) <= 2000), return the list with every 0 moved "
               "to the end while the non-zero values keep their relative order."),
    signature="move_zeros(nums: list[int]) -> list[int]",
    generate=_zeros_case,
    references={
        "write pointer, in place": source("""
            def move_zeros(nums):
                k = 0
                for x in nums:
                    if x != 0:
                        nums[k] = x
                        k += 1
                for i in range(k, len(nums)):
                    nums[i] = 0
                return nums
            """),
        "comprehension and padding": source("""
            def move_zeros(nums):
                kept = [x for x in nums if x != 0]
                return kept + [0] * (len(nums) - len(kept))
            """),
        "filter and count": source("""
            def move_zeros(nums):
                return list(filter(None, nums)) + [0] * nums.count(0)
            """),
        "stable sort on is-zero": source("""
            def move_zeros(nums):
                return sorted(nums, key=lambda x: x == 0)
            """),
        "remove and append each zero": source("""
            def move_zeros(nums):
                nums = list(nums)
                for _ in range(nums.count(0)):
                    nums.remove(0)
                    nums.append(0)
                return nums
            """),
        "bubble zeros right": source("""
            def move_zeros(nums):
                nums = list(nums)
                for end in range(len(nums) - 1, 0, -1):
                    for j in range(end):
                        if nums[j] == 0 and nums[j + 1] != 0:
                            nums[j], nums[j + 1] = nums[j + 1], nums[j]
                return nums
            """),
    },
)


# -- majority element ------------------------------------------------------------------------
def _majority_case(rng: random.Random, index: int) -> tuple[list[int]]:
    if index < 3:
        return ([[7], [-3, -3, 2], [2, 2, 1, 1, 2]][index],)
    size = rng.randint(3, 11) if index < 6 else 700 * (index - 4)
    winner = rng.randint(-1000, 1000)
    rest = [x + (x >= winner) for x in (rng.randint(-1000, 999) for _ in range((size - 1) // 2))]
    if index < 6:
        return (rng.sample(rest + [winner] * (size - len(rest)), size),)
    return (rest + [winner] * (size - len(rest)),)  # large: the minority first, the worst order for a scan


MAJORITY_ELEMENT = Spec(
    slug="majority-element",
    title="Majority element",
    difficulty="easy",
    tags=("array", "counting", "voting"),
    statement=("Given a non-empty list of integers `nums` (1 <= len(nums) <= 5000) in which one value occurs "
               "more than len(nums) // 2 times, return that value."),
    signature="majority_element(nums: list[int]) -> int",
    generate=_majority_case,
    references={
        "Counter.most_common": source("""
            from collections import Counter

            def majority_element(nums):
                return Counter(nums).most_common(1)[0][0]
            """),
        "Boyer-Moore vote": source("""
            def majority_element(nums):
                candidate, votes = None, 0
                for x in nums:
                    if votes == 0:
                        candidate = x
                    votes += 1 if x == candidate else -1
                return candidate
            """),
        "dict count, early exit": source("""
            def majority_element(nums):
                counts = {}
                for x in nums:
                    counts[x] = counts.get(x, 0) + 1
                    if counts[x] > len(nums) // 2:
                        return x
            """),
        "statistics.mode": source("""
            import statistics

            def majority_element(nums):
                return statistics.mode(nums)
            """),
        "sort, take the middle": source("""
            def majority_element(nums):
                return sorted(nums)[len(nums) // 2]
            """),
        "naive list.count per element": source("""
            def majority_element(nums):
                for x in nums:
                    if nums.count(x) > len(nums) // 2:
                        return x
            """),
    },
)


# -- missing number --------------------------------------------------------------------------
def _missing_case(rng: random.Random, index: int) -> tuple[list[int]]:
    if index < 3:
        return ([[], [0], [1]][index],)
    size = rng.randint(2, 12) if index < 6 else 800 * (index - 4)
    missing = rng.randint(0, size) if index < 6 else rng.randint(size * 2 // 3, size)
    return (rng.sample([x for x in range(size + 1) if x != missing], size),)


MISSING_NUMBER = Spec(
    slug="missing-number",
    title="Missing number",
    difficulty="easy",
    tags=("array", "math", "bit manipulation"),
    statement=("Given a list `nums` of n distinct integers taken from 0..n (0 <= n <= 5000), in any order, "
               "return the one value of 0..n that is not in the list."),
    signature="missing_number(nums: list[int]) -> int",
    generate=_missing_case,
    references={
        "sum formula": source("""
            def missing_number(nums):
                n = len(nums)
                return n * (n + 1) // 2 - sum(nums)
            """),
        "xor": source("""
            from functools import reduce
            from operator import xor

            def missing_number(nums):
                return reduce(xor, nums, 0) ^ reduce(xor, range(len(nums) + 1), 0)
            """),
        "set difference": source("""
            def missing_number(nums):
                return (set(range(len(nums) + 1)) - set(nums)).pop()
            """),
        "presence flags": source("""
            def missing_number(nums):
                seen = [False] * (len(nums) + 1)
                for x in nums:
                    seen[x] = True
                return seen.index(False)
            """),
        "sort and scan": source("""
            def missing_number(nums):
                for i, x in enumerate(sorted(nums)):
                    if i != x:
                        return i
                return len(nums)
            """),
        "naive membership in the list": source("""
            def missing_number(nums):
                for i in range(len(nums) + 1):
                    if i not in nums:
                        return i
            """),
    },
    stdio=numbers_form("missing_number(nums)"),
)


# -- find a duplicate (any one: answers are not unique) ---------------------------------------
def _duplicate_case(rng: random.Random, index: int) -> tuple[list[int]]:
    if index < 4:
        return ([[], [5], [-2, -2], [1, 2, 3, 1, 2, 3]][index],)
    if index < 6:
        return ([rng.randint(-5, 5) for _ in range(rng.randint(2, 10))],)
    size = 350 * (index - 3)
    nums = rng.sample(range(-10**6, 10**6), size)
    if index != 7:  # one repeated value, both copies late, the worst case for a pairwise scan
        first = rng.randrange(size // 2, size - 1)
        nums[rng.randrange(first + 1, size)] = nums[first]
    return (nums,)


FIND_DUPLICATE = Spec(
    slug="find-duplicate",
    title="Find a duplicate",
    difficulty="easy",
    tags=("array", "hash table"),
    statement=("Given a list of integers `nums` (0 <= len(nums) <= 3000), return any value that occurs at "
               "least twice in it, or None if all values are distinct. When several values repeat, "
               "any one of them is accepted."),
    signature="find_duplicate(nums: list[int]) -> int | None",
    generate=_duplicate_case,
    references={
        "seen set": source("""
            def find_duplicate(nums):
                seen = set()
                for x in nums:
                    if x in seen:
                        return x
                    seen.add(x)
                return None
            """),
        "Counter": source("""
            from collections import Counter

            def find_duplicate(nums):
                return next((x for x, c in Counter(nums).items() if c > 1), None)
            """),
        "sort, compare neighbours": source("""
            def find_duplicate(nums):
                a = sorted(nums)
                return next((x for x, y in zip(a, a[1:]) if x == y), None)
            """),
        "sorted insertion with bisect": source("""
            from bisect import bisect_left

            def find_duplicate(nums):
                kept = []
                for x in nums:
                    i = bisect_left(kept, x)
                    if i < len(kept) and kept[i] == x:
                        return x
                    kept.insert(i, x)
                return None
            """),
        "list.index of each value": source("""
            def find_duplicate(nums):
                for i, x in enumerate(nums):
                    if nums.index(x) != i:
                        return x
                return None
            """),
        "naive double loop": source("""
            def find_duplicate(nums):
                for i in range(len(nums)):
                    for j in range(i + 1, len(nums)):
                        if nums[i] == nums[j]:
                            return nums[i]
                return None
            """),
    },
    verify=source("""
        def verify(args, answer):
            nums = args[0]
            if answer is None:
                return len(set(nums)) == len(nums)
            return type(answer) is int and nums.count(answer) >= 2
        """),
    stdio=numbers_form("json.dumps(find_duplicate(nums))", imports="import json\nimport sys"),
)


# -- balanced brackets -----------------------------------------------------------------------
CLOSER = {"(": ")", "[": "]", "{": "}"}


def _random_balanced(rng: random.Random, pairs: int) -> str:
    out: list[str] = []
    stack: list[str] = []
    while pairs or stack:
        if pairs and (not stack or rng.random() < 0.5):
            stack.append(rng.choice("([{"))
            out.append(stack[-1])
            pairs -= 1
        else:
            out.append(CLOSER[stack.pop()])
    return "".join(out)


def _brackets_case(rng: random.Random, index: int) -> tuple[str]:
    if index < 4:
        return (["", "(", "([)]", "{[]}()"][index],)
    if index == 4:
        return (_random_balanced(rng, rng.randint(3, 8)),)
    if index == 5:
        return ("".join(rng.choice("()[]{}") for _ in range(rng.randint(4, 12))),)
    if index == 7:
        return (_random_balanced(rng, 1500),)
    # Deep nesting, the worst case for removing matched pairs; case 8 has its last bracket wrong.
    opens = [rng.choice("([{") for _ in range(200 * (index - 4))]
    text = "".join(opens) + "".join(CLOSER[c] for c in reversed(opens))
    if index == 8:
        text = text[:-1] + ("]" if text[-1] != "]" else ")")
    return (text,)


BALANCED_BRACKETS = Spec(
    slug="balanced-brackets",
    title="Balanced brackets",
    difficulty="easy",
    tags=("string", "stack"),
    statement=("Given a string `s` made of the characters ()[]{} only (0 <= len(s) <= 4000), return True if "
               "every bracket is closed by a bracket of the same kind in the right order (the brackets nest "
               "properly), else False."),
    signature="is_balanced(s: str) -> bool",
    generate=_brackets_case,
    references={
        "stack with a pair map": source("""
            def is_balanced(s):
                opener = {")": "(", "]": "[", "}": "{"}
                stack = []
                for c in s:
                    if c in opener:
                        if not stack or stack.pop() != opener[c]:
                            return False
                    else:
                        stack.append(c)
                return not stack
            """),
        "stack of expected closers": source("""
            def is_balanced(s):
                closer = {"(": ")", "[": "]", "{": "}"}
                expected = []
                for c in s:
                    if c in closer:
                        expected.append(closer[c])
                    elif not expected or expected.pop() != c:
                        return False
                return not expected
            """),
        "stack kept in a string": source("""
            def is_balanced(s):
                stack = ""
                for c in s:
                    if c in "([{":
                        stack += c
                    elif stack and stack[-1] + c in ("()", "[]", "{}"):
                        stack = stack[:-1]
                    else:
                        return False
                return not stack
            """),
        "str.replace until stable": source("""
            def is_balanced(s):
                previous = None
                while s != previous:
                    previous = s
                    s = s.replace("()", "").replace("[]", "").replace("{}", "")
                return not s
            """),
        "regex subn until stable": source("""
            import re

            PAIR = re.compile(r"\\(\\)|\\[\\]|\\{\\}")

            def is_balanced(s):
                removed = 1
                while removed:
                    s, removed = PAIR.subn("", s)
                return not s
            """),
        "naive: delete the first adjacent pair, rescan": source("""
            def is_balanced(s):
                chars = list(s)
                while chars:
                    for i in range(len(chars) - 1):
                        if chars[i] + chars[i + 1] in ("()", "[]", "{}"):
                            del chars[i:i + 2]
                            break
                    else:
                        return False
                return True
            """),
    },
)

SPECS = [COUNT_PAIRS, FIRST_UNIQUE_CHAR, VALID_ANAGRAM, MOVE_ZEROS, MAJORITY_ELEMENT, MISSING_NUMBER,
         FIND_DUPLICATE, BALANCED_BRACKETS]
