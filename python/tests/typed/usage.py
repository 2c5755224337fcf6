"""Every public call of the swapsight module as docs/python.md shows it,
type-checked as a user's script is: ``mypy --strict`` and pyright
(scripts/test). Never run, never collected by pytest (not a ``test_*``
file): what it checks is that the documented uses type-check, and what
they give (``assert_type``), not what they do."""

import asyncio
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Coroutine,
    Dict,
    Iterator,
    List,
    Literal,
    Optional,
    assert_type,
)

import swapsight
from swapsight import FitAnswer, FitBound, FitNeed, FitSetting, MlxWatch, Report, TorchWatch


def load() -> bytes:
    return b""


# --- phases ---------------------------------------------------------------


@swapsight.phase("denoise")
def denoise(latents: List[float]) -> List[float]:
    return latents


@swapsight.phase
def decode(latents: List[float]) -> bytes:
    return bytes(len(latents))


class Pipe:
    @swapsight.phase
    def decode(self, steps: int) -> str:
        return "x" * steps


@swapsight.phase("batches")
def batches(n: int) -> Iterator[int]:
    yield from range(n)


@swapsight.phase("fetch")
async def fetch(url: str) -> bytes:
    await asyncio.sleep(0)
    return url.encode()


@swapsight.phase("stream")
async def stream(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i


def phases() -> None:
    with swapsight.phase("load") as p:
        pipe = load()
    assert_type(p, swapsight.Phase)
    assert_type(p.name, str)
    assert_type(pipe, bytes)
    assert_type(swapsight.phase("load"), swapsight.Phase)
    with swapsight.phase("load"):
        with swapsight.phase("unet"):
            pass
    assert_type(denoise([1.0]), List[float])
    assert_type(decode([1.0]), bytes)
    assert_type(Pipe().decode(3), str)
    assert_type(list(batches(3)), List[int])
    coroutine_function: Callable[[str], Coroutine[Any, Any, bytes]] = fetch
    del coroutine_function
    swapsight.mark("load")
    swapsight.mark("decode")
    swapsight.end_phase()
    assert_type(swapsight.clean_name("two\nlines"), str)
    # Literal[64] to pyright, int to mypy: both are ints.
    longest: int = swapsight.MAX_NAME_CHARS
    variable: str = swapsight.ENV_VAR
    del longest, variable
    assert_type(swapsight.__version__, str)


async def awaited() -> None:
    assert_type(await fetch("u"), bytes)
    assert_type([i async for i in stream(2)], List[int])


# --- counters and watches --------------------------------------------------


def counters(queue: List[int]) -> None:
    swapsight.counter("queue", len(queue), unit="items")
    swapsight.counter("pool", 3 << 30)
    swapsight.counter("ratio", 0.5, "%")
    torch_watch = swapsight.watch_torch()
    assert_type(torch_watch, TorchWatch)
    assert_type(torch_watch.running, bool)
    torch_watch.stop()
    with swapsight.watch_torch(interval=0.1):
        pass
    mlx_watch = swapsight.watch_mlx(0.5)
    assert_type(mlx_watch, MlxWatch)
    mlx_watch.stop()
    with swapsight.watch_mlx() as w:
        assert_type(w, MlxWatch)


def mlx_sizes(model: Any, cache: List[Any]) -> None:
    sizes = swapsight.mlx_sizes(model, cache)
    assert_type(sizes, Dict[str, int])
    swapsight.mlx_sizes(model=model)
    swapsight.mlx_sizes(cache=cache)


# --- record() and its report ------------------------------------------------


def recording() -> None:
    with swapsight.record("run.jsonl", torch=True) as rec:
        with swapsight.phase("load"):
            load()
    assert_type(rec, swapsight.record)
    report = rec.report
    assert_type(report, Optional[Report])
    assert_type(rec.error, Optional[str])
    if report is not None:
        verdict = report.verdict
        assert_type(verdict, Literal["fits", "hidden-memory", "overflow", "false-fit"])
        print(report)
        report.plot("run.png")
        report.plot("run.svg", processes=5, size=(1200, 600))
        assert_type(report.phases, List[Dict[str, Any]])
        assert_type(report.processes, List[Dict[str, Any]])
        assert_type(report.counters, List[Dict[str, Any]])
        assert_type(report.to_dict(), Dict[str, Any])
        frame = report.to_pandas()
        report.to_pandas(table="counters")
        del frame
    with swapsight.record("run.jsonl", interval=5) as every_five:
        pass
    with swapsight.record(interval="250ms", mlx=True) as anywhere:
        pass
    rec2 = swapsight.record("run.jsonl", interval=0.25, top=5)
    assert_type(rec2.start(), swapsight.record)
    assert_type(rec2.stop(), Optional[Report])
    assert_type(rec2.recorder_pid, Optional[int])
    assert_type(rec2.path, str)
    del every_five, anywhere
    assert_type(Report.of("run.jsonl"), Report)


# --- fit, compare, advise, errors ------------------------------------------


def answers() -> None:
    answer = swapsight.fit("~/models/Llama-3.1-8B-Instruct")
    assert_type(answer, FitAnswer)
    assert_type(answer.verdict, Literal["fits", "fits-only-by-swapping", "does-not-fit"])
    assert_type(answer.fits, bool)
    if not answer.fits:
        print(answer.summary)
        for s in answer.settings:
            assert_type(s, FitSetting)
            print(s.line, "—", s.risk)
    for b in answer.bounds:
        assert_type(b, FitBound)
        assert_type(b.bytes, int)
    swapsight.fit(8 << 30)
    swapsight.fit("8G", from_trace="last-run.jsonl")
    swapsight.fit("./model", no_history=True)
    long = swapsight.fit("./model", context="8k", parallel=2, kv_dtype="q8_0", runtime="mlx")
    for n in long.need:
        assert_type(n, FitNeed)
        assert_type(n.bytes, int)
    assert_type(long.largest_context, Optional[Dict[str, Any]])
    runs = swapsight.compare(["eager.jsonl", "offload.jsonl"], labels=["eager", "offload"])
    assert_type(runs, Dict[str, Any])
    advice = swapsight.advise("run.jsonl", recommended_max="40G")
    assert_type(advice["high_ratio"], float)
    assert_type(advice["applies"], bool)
    assert_type(advice["text"], str)
    run = advice.get("run")
    if run is not None:
        assert_type(run["needed_bytes"], int)
    swapsight.advise(reserve="8G")
    try:
        swapsight.record("/no/such/folder/run.jsonl").start()
    except swapsight.BudgetExceeded as e:
        assert_type(e, swapsight.BudgetExceeded)
    except swapsight.Error as e:
        print(str(e))
