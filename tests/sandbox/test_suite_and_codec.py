import json
import math
import os

import pytest

from rewardkit.sandbox import SuiteError, TestSuite, normalize_output, values_equal
from rewardkit.sandbox.runtime import protocol
from rewardkit.sandbox.runtime.supervise import integral_trapezoid


def test_suite_modes_round_trip() -> None:
    stdio = {"mode": "stdio", "cases": [{"input": "1\n", "output": "2\n"}], "evaluator": None}
    call = {"mode": "call", "entry_point": "Solution.f", "cases": [{"args": [1], "expected": 2}]}
    script = {"mode": "script", "entry_point": "f", "check": "def check(c):\n    assert c(1) == 2\n"}
    for data in (stdio, call, script):
        suite = TestSuite.from_dict(data)
        assert TestSuite.from_dict(suite.to_dict()) == suite
    assert TestSuite.from_dict('{"cases": [{"input": "", "output": ""}]}').mode == "stdio"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"mode": "fuzzy", "cases": []}, "unknown test mode"),
        ({"mode": "call", "cases": [{"args": [], "expected": 1}]}, "entry_point"),
        ({"mode": "script", "entry_point": "f"}, "check"),
        ({"mode": "stdio", "cases": []}, "at least one case"),
        ({"mode": "stdio", "cases": [{"input": "1"}]}, "'input' and 'output'"),
        ({"mode": "call", "entry_point": "f", "cases": [{"args": 1, "expected": 1}]}, "'args'"),
        ({"mode": "script", "entry_point": "f", "check": "def check(:"}, "does not compile"),
        ([1, 2], "JSON object"),
        *[({"mode": "call", "entry_point": "f", "cases": [{"args": [], "expected": 1}], **options}, message)
          for options, message in (
              ({"compare": "fuzzy"}, "unknown call comparison 'fuzzy'"),
              ({"compare": "values", "oracle": "set_equal"}, "'oracle' is for compare \"evalplus\""),
              ({"compare": "evalplus", "oracle": "nope"}, "one of poly_root"),
              ({"atol": [0.1, 0.2]}, "one tolerance per case"),
              ({"atol": -1}, "finite number >= 0"),
              ({"atol": "1e-6"}, "finite number >= 0"),
              ({"calls_per_frame": 0}, "'calls_per_frame' must be a positive integer"),
              ({"calls_per_frame": 2.5}, "'calls_per_frame' must be a positive integer"),
          )],
    ],
)
def test_bad_suites_say_what_to_fix(data: object, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        TestSuite.from_dict(data)  # type: ignore[arg-type]


def test_codec_keeps_plain_types() -> None:
    value = [1, 2**80, 1.5, math.inf, (1, "a"), {1, 2}, frozenset({3}), {"k": (None, True)},
             b"\x00\xff", 1 + 2j, "é"]
    assert protocol.decode_value(protocol.encode_value(value)) == value
    decoded_nan = protocol.decode_value(protocol.encode_value(float("nan")))
    assert math.isnan(decoded_nan)


def test_codec_rejects_objects_and_subclasses() -> None:
    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True

    class SneakyInt(int):
        def __eq__(self, other: object) -> bool:
            return True

    for bad in (AlwaysEqual(), SneakyInt(3), [1, AlwaysEqual()], {"k": SneakyInt(1)}):
        with pytest.raises(protocol.NotPlainData):
            protocol.encode_value(bad)


def test_values_equal_is_json_level() -> None:
    assert values_equal([0, 1], (0, 1))
    assert values_equal(0.1 + 0.2, 0.3)
    assert not values_equal(1, True)
    assert not values_equal([1, 2], [1, 2, 3])
    assert not values_equal({"a": 1}, {"a": 2})
    assert not values_equal("1", 1)


def test_normalize_output_ignores_trailing_whitespace_only() -> None:
    assert normalize_output("1 2  \n3\n\n") == normalize_output("1 2\n3")
    assert normalize_output("1 2") != normalize_output("12")
    assert normalize_output("a\n\nb") != normalize_output("a\nb")


def test_trapezoid_integral_by_hand() -> None:
    # RSS 100 KiB for 1 s, then a ramp to 300 KiB over 2 s: 100 + (100+300)/2*2 = 500 KiB·s
    assert integral_trapezoid([(0.0, 100.0), (1.0, 100.0), (3.0, 300.0)]) == pytest.approx(500.0)
    # unequal spacing is weighted by elapsed time, not summed per sample
    assert integral_trapezoid([(0.0, 10.0), (0.1, 10.0), (10.0, 10.0)]) == pytest.approx(100.0)
    assert integral_trapezoid([(0.0, 5.0)]) == 0.0


def _nested_dicts(levels: int) -> object:
    value: object = 0
    for _ in range(levels):
        value = {"k": value}
    return value


def test_frames_nested_past_the_limit_are_refused_and_the_deepest_values_are_not() -> None:
    """A value as deep as the codec allows (dicts: three JSON levels each) crosses a frame;
    a frame one level past :data:`protocol.MAX_NESTING` is a ProtocolError, even when
    this process could parse it (another, with a deeper stack, might not)."""
    deepest = _nested_dicts(protocol.VALUE_DEPTH)
    frames = protocol.FrameBuffer(nesting=protocol.MAX_NESTING)  # as the worker reads a solution's
    frames.feed(protocol.encode_frame({"ok": True, "results": [{"ok": True,
                                                                "value": protocol.encode_value(deepest)}]}))
    message = frames.pop()
    assert message is not None and protocol.decode_value(message["results"][0]["value"]) == deepest
    with pytest.raises(protocol.NotPlainData):
        protocol.encode_value(_nested_dicts(protocol.VALUE_DEPTH + 2))
    too_deep = b"{\"a\":" + b"[" * protocol.MAX_NESTING + b"]" * protocol.MAX_NESTING + b"}"
    frames.feed(len(too_deep).to_bytes(4, "big") + too_deep)
    with pytest.raises(protocol.ProtocolError, match="nested"):
        frames.pop()
    wide = b"{\"a\":[" + b"[[]]," * 5000 + b"[]]}"  # many brackets, shallow
    frames.feed(len(wide).to_bytes(4, "big") + wide)
    assert frames.pop() is not None
    trusting = protocol.FrameBuffer()  # a frame from the trusted side is not walked
    trusting.feed(len(too_deep).to_bytes(4, "big") + too_deep)
    assert trusting.pop() is not None


def test_json_texts_are_written_into_a_frame_as_they_are() -> None:
    frames = protocol.FrameBuffer()
    frames.feed(protocol.encode_frame({"ok": True, "value": [1, 2.5]}))
    frames.feed(protocol.encode_frame({"ok": False, "error": "x"}))
    texts = protocol.JsonTexts([frames.pop_text(), frames.pop_text()])  # type: ignore[list-item]
    assert texts == [b'{"ok":true,"value":[1,2.5]}', b'{"ok":false,"error":"x"}']
    for message in ({"ok": True, "results": texts}, {"results": texts, "more": protocol.JsonTexts()},
                    {"results": protocol.JsonTexts()}):
        frames.feed(protocol.encode_frame(message))
        expected = {key: [json.loads(text) for text in value] if isinstance(value, list) else value
                    for key, value in message.items()}
        assert frames.pop() == expected


def test_a_read_buffer_gives_what_each_read_got_and_nothing_at_the_end() -> None:
    read_end, write_end = os.pipe()
    try:
        pipe = protocol.ReadBuffer(8)
        frames = protocol.FrameBuffer()
        message = protocol.encode_frame({"ok": True, "text": "more than eight bytes"})
        os.write(write_end, message)
        os.close(write_end)
        while chunk := pipe.read(read_end):  # eight bytes at most at a time, into the same buffer
            assert len(chunk) <= 8
            frames.feed(chunk)
        assert frames.pop() == {"ok": True, "text": "more than eight bytes"}
    finally:
        os.close(read_end)
